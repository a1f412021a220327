/** What the programs that unfurl a pasted link send as their User-Agent, as they send it. */
export const UNFURLERS = [
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Slack-ImgProxy (+https://api.slack.com/robots)',
  'TelegramBot (like TwitterBot)',
  'Twitterbot/1.0',
  // iMessage's preview.
  'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  'WhatsApp/2.23.20.0 A',
  'http.rb/5.2.0 (Mastodon/4.3.0; +https://mastodon.social/)',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
  'Synapse (bot; +https://github.com/matrix-org/synapse)',
  'Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)',
  'Discourse Forum Onebox v3.2.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)',
  'Tumblr/14.0.835.186',
];

/** People's browsers whose User-Agent holds a bot's letters: a Cubot phone's. */
export const PEOPLE = ['Mozilla/5.0 (Linux; Android 9; CUBOT P30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36'];
