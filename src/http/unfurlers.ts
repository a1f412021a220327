/**
 * Whether a request comes from a program that fetches a pasted link to show its preview, or from a
 * crawler, rather than from a person: chat apps (Discord, Slack, Telegram, WhatsApp, iMessage,
 * Teams, Matrix), social sites (X, Facebook, LinkedIn, Mastodon and its kin) and search engines.
 * Such fetches count no view, download or click (docs/decisions.md, "What counts as a view"): one
 * link pasted into four chats counted four views before anyone looked. Matched by what they say
 * they are; one that pretends to be a browser is counted as one.
 */
const UNFURLER = /bot|crawler|spider|facebookexternalhit|whatsapp|mastodon|pleroma|akkoma|misskey|preview|embedly|iframely/i;

export function isUnfurler(userAgent: string | undefined): boolean {
  return userAgent !== undefined && UNFURLER.test(userAgent);
}
