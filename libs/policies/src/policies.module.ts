import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '@switchboard/api-keys';
import { INLINE_USAGE_STATUS } from '@switchboard/common';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { IdentityModule } from '@switchboard/identity';
import { AlertMailer } from './alerts/alert-mailer';
import { BudgetAlerts } from './alerts/budget-alerts';
import { BudgetResetJob } from './budget-reset.job';
import { CounterLedger } from './counter-ledger';
import { COUNTER_STORE, CounterStore } from './counters/counter-store';
import { MemoryCounterStore } from './counters/memory-counter-store';
import { RedisCounterStore } from './counters/redis-counter-store';
import { RateLimitPolicyEntity } from './entities/rate-limit-policy.entity';
import { UsageLimitCounterEntity } from './entities/usage-limit-counter.entity';
import { UsageLimitPolicyEntity } from './entities/usage-limit-policy.entity';
import { InlineBudgetStatus } from './inline-budget-status';
import { RateLimitPoliciesController, UsageLimitPoliciesController } from './policies.controller';
import { POLICIES_SETTINGS, PoliciesSettings } from './policies.settings';
import { PolicyEnforcer } from './policy-enforcer';
import { PolicyRegistry } from './policy-registry';
import { PolicyScopeService } from './policy-scope.service';
import { RateLimitPoliciesService } from './rate-limit-policies.service';
import { UsageLimitPoliciesService } from './usage-limit-policies.service';
import { UsageRecorder } from './usage-recorder';

/** Counters shared through Redis when REDIS_URL is set, in-process otherwise. */
function createCounterStore(config: AppConfig, settings: PoliciesSettings): CounterStore {
  if (!config.redisUrl) return new MemoryCounterStore();
  const store = new RedisCounterStore({
    url: config.redisUrl,
    prefix: settings.redisPrefix,
    budgetTtlMs: settings.budgetTtlMs,
  });
  const logger = new Logger('PolicyCounters');
  store.client.on('error', (error: Error) => logger.warn(`Redis: ${error.message}`));
  return store;
}

/**
 * Rate-limit and usage-limit policies: storage, counters, enforcement, alerts and resets.
 *
 * Global for one export: INLINE_USAGE_STATUS, which the API-key and provider services (of libs
 * this one imports) take optionally to show a used-up inline budget as `exhausted`.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forFeature([RateLimitPolicyEntity, UsageLimitPolicyEntity, UsageLimitCounterEntity]),
    IdentityModule,
    ApiKeysModule,
  ],
  controllers: [RateLimitPoliciesController, UsageLimitPoliciesController],
  providers: [
    { provide: POLICIES_SETTINGS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => config.policies },
    { provide: COUNTER_STORE, inject: [APP_CONFIG, POLICIES_SETTINGS], useFactory: createCounterStore },
    PolicyRegistry,
    CounterLedger,
    UsageRecorder,
    AlertMailer,
    BudgetAlerts,
    PolicyEnforcer,
    PolicyScopeService,
    RateLimitPoliciesService,
    UsageLimitPoliciesService,
    BudgetResetJob,
    InlineBudgetStatus,
    { provide: INLINE_USAGE_STATUS, useExisting: InlineBudgetStatus },
  ],
  exports: [PolicyEnforcer, BudgetResetJob, INLINE_USAGE_STATUS],
})
export class PoliciesModule implements OnApplicationShutdown {
  constructor(@Inject(COUNTER_STORE) private readonly store: CounterStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
