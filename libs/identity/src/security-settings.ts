/**
 * Data-visibility and prompt-access settings of the spec, with its defaults. Organisation owners
 * and admins always have full access; a workspace may override any setting.
 */
export interface SecuritySettings {
  membersViewAllData: boolean;
  managersViewAllData: boolean;
  membersViewPrompts: boolean;
  membersWritePrompts: boolean;
  managersViewPrompts: boolean;
  managersWritePrompts: boolean;
  membersViewAnalytics: boolean;
  managersViewAnalytics: boolean;
}

export const SECURITY_SETTING_KEYS: readonly (keyof SecuritySettings)[] = [
  'membersViewAllData',
  'managersViewAllData',
  'membersViewPrompts',
  'membersWritePrompts',
  'managersViewPrompts',
  'managersWritePrompts',
  'membersViewAnalytics',
  'managersViewAnalytics',
];

export const DEFAULT_SECURITY_SETTINGS: Readonly<SecuritySettings> = Object.freeze({
  membersViewAllData: true,
  managersViewAllData: true,
  membersViewPrompts: true,
  membersWritePrompts: false,
  managersViewPrompts: true,
  managersWritePrompts: true,
  membersViewAnalytics: true,
  managersViewAnalytics: true,
});

/** Limits on user API keys; null means no limit. */
export interface ApiKeyPolicy {
  max_user_keys_per_user: number | null;
  default_expiry_days: number | null;
  max_expiry_days: number | null;
}

export interface OrganisationSettings {
  security?: Partial<SecuritySettings>;
  api_keys?: Partial<ApiKeyPolicy>;
}

export interface WorkspaceSettings {
  security?: Partial<SecuritySettings>;
  api_keys?: Partial<ApiKeyPolicy>;
}

export function resolveSecuritySettings(
  organisation: Partial<SecuritySettings> | undefined,
  workspace?: Partial<SecuritySettings>,
): SecuritySettings {
  return { ...DEFAULT_SECURITY_SETTINGS, ...organisation, ...workspace };
}

export function resolveApiKeyPolicy(
  organisation: Partial<ApiKeyPolicy> | undefined,
  workspace?: Partial<ApiKeyPolicy>,
): ApiKeyPolicy {
  const base: ApiKeyPolicy = {
    max_user_keys_per_user: null,
    default_expiry_days: null,
    max_expiry_days: null,
  };
  return { ...base, ...organisation, ...workspace };
}
