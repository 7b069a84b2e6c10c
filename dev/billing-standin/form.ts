// The provider's request encoding: application/x-www-form-urlencoded with
// bracketed keys (`line_items[0][price]=p&metadata[account_id]=a`), read back
// into nested objects, index keys into arrays in index order. qs reads it as
// the SDK writes it (and refuses keys such as __proto__ by default).
import qs from 'qs'

export function parseProviderForm(text: string): Record<string, unknown> {
  return qs.parse(text)
}
