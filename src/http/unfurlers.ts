/**
 * Whether a request comes from a program that fetches a pasted link to show its preview, or from a
 * crawler, rather than from a person: chat apps (Discord, Slack, Telegram, WhatsApp, iMessage,
 * Teams, Matrix), social sites (X, Facebook, LinkedIn, Mastodon and its kin) and search engines.
 * Such fetches count no view, download or click (docs/decisions.md, "What counts as a view"): one
 * link pasted into four chats counted four views before anyone looked. Matched by what they say
 * they are; one that pretends to be a browser is counted as one. Bluesky's (Cardyb), a forum's
 * (Discourse's Onebox), Google Chat's (PageRenderer) and Tumblr's name no bot; a Cubot phone's
 * browser does, and is a person's.
 */
const UNFURLER = /(?<!cu)bot|crawler|spider|facebookexternalhit|whatsapp|mastodon|pleroma|akkoma|misskey|preview|embedly|iframely|cardyb|onebox|pagerenderer|tumblr/i;

export function isUnfurler(userAgent: string | undefined): boolean {
  return userAgent !== undefined && UNFURLER.test(userAgent);
}
