/**
 * The only form in which a stored secret is ever answered: enough to recognise it (`sk-...abcd`),
 * useless to an attacker. Short secrets show nothing, since a prefix and suffix would be most of them.
 */
export function maskSecret(value: string): string {
  if (value.length >= 16) return `${value.slice(0, 3)}...${value.slice(-4)}`;
  if (value.length >= 8) return `...${value.slice(-2)}`;
  return '********';
}
