import { Global, Module } from '@nestjs/common';
import { SECRET_CIPHER_FACTORY, SecretCipher } from './secret-cipher';
import { SecretResolver } from './secret-resolver';

/** Encryption at rest for every stored credential, and the external secret managers. */
@Global()
@Module({
  providers: [SECRET_CIPHER_FACTORY, SecretResolver],
  exports: [SecretCipher, SecretResolver],
})
export class SecretsModule {}
