export type { PoliciesSettings, SmtpSettings } from '@switchboard/config';

/** AppConfig.policies, injectable on its own. */
export const POLICIES_SETTINGS = Symbol('POLICIES_SETTINGS');
