import { Global, Module } from '@nestjs/common';
import { DomainEvents } from './domain-events';
import { InvalidationBus } from './invalidation-bus';

@Global()
@Module({ providers: [DomainEvents, InvalidationBus], exports: [DomainEvents, InvalidationBus] })
export class CommonModule {}
