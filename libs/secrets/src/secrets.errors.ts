import { AppError } from '@switchboard/common';
import { SECRET_MANAGER_LABELS, SecretManagerType } from './managers/secret-manager.types';

export const SECRET_REFERENCE_UNAVAILABLE = 'secret_reference_unavailable';

/** Error codes of the secrets area. Messages name the reference and manager, never a secret. */
export const SecretErrors = {
  /** The manager could not be reached, refused us, or does not hold the secret: a 502 for the caller. */
  unavailable: (
    reference: { id: string; name?: string | null },
    managerType: SecretManagerType,
    target: string | null,
    detail: string,
  ) =>
    new AppError(
      502,
      SECRET_REFERENCE_UNAVAILABLE,
      `Secret reference ${describeReference(reference)} could not be read from ${
        SECRET_MANAGER_LABELS[managerType] ?? managerType
      }${target ? ` at ${target}` : ''}: ${detail}`,
      null,
      'api_error',
    ),
};

export function describeReference(reference: { id: string; name?: string | null }): string {
  return reference.name && reference.name !== reference.id
    ? `'${reference.name}' (${reference.id})`
    : `'${reference.id}'`;
}
