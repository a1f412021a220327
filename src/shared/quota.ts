/**
 * The quota that applies to an account: its own quota when an administrator set one, else the
 * instance default. 0 means "no quota" in both places (as `DEFAULT_QUOTA=0` does). Accounts exempt
 * from the default quota (`quotas.bypass`, Administrators) are still held to a quota set on them.
 * Shared: the account settings show it and every upload is held to it.
 */
export function effectiveQuotaBytes(userQuotaBytes: number | null, defaultQuotaBytes: number, exemptFromDefault: boolean): number | null {
  if (userQuotaBytes !== null) return userQuotaBytes > 0 ? Number(userQuotaBytes) : null;
  if (exemptFromDefault) return null;
  return defaultQuotaBytes > 0 ? defaultQuotaBytes : null;
}
