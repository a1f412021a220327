import { createHash } from 'node:crypto';
import type { ArchiveManifest } from '../api/archives.ts';
import { withoutDirectionControls } from '../api/display-text.ts';
import type { FileRow } from './file-access.ts';

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export interface SharePageInput {
  file: FileRow;
  locked: boolean;
  /** Absolute URLs. */
  pageUrl: string;
  rawUrl: string;
  downloadUrl: string;
  unlockUrl: string;
  /** Why the password sent without the page's script was refused, shown on the form. */
  unlockError?: string | undefined;
  /** The beginning of a text file, for its preview. */
  textPreview: string | null;
  /** The file's thumbnail (absolute), once made (contract §10). */
  thumbnailUrl?: string | null;
  /**
   * An open archive's manifest (contract §9: the share page of a public archive shows it), and the
   * absolute URL its entries are downloaded from (POST /api/share/{urlId}/{name}/archive/entry).
   */
  archive?: { manifest: ArchiveManifest; entryUrl: string } | null;
}

function humanSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  // The web app's rounding (web/src/format.ts), so a file shows one size in both places.
  return `${value.toFixed(value >= 100 ? 0 : 1).replace(/\.0$/, '')} ${units[unit]}`;
}

export function previewKind(mimeType: string): 'image' | 'video' | 'audio' | 'text' | 'pdf' | null {
  if (mimeType === 'image/svg+xml') return null;
  if (mimeType.startsWith('image/')) return 'image';
  if (mimeType.startsWith('video/')) return 'video';
  if (mimeType.startsWith('audio/')) return 'audio';
  if (mimeType === 'application/pdf') return 'pdf';
  if (mimeType.startsWith('text/') || mimeType === 'application/json') return mimeType === 'text/html' ? null : 'text';
  return null;
}

const styles = `
:root{color-scheme:light dark;--bg:#f6f7f9;--card:#fff;--fg:#1c1f24;--muted:#5f6673;--accent:#2f6fde;--button:#2f6fde;--error:#c62828;--border:#dde1e7}
@media (prefers-color-scheme:dark){:root{--bg:#111317;--card:#1b1e24;--fg:#e7e9ee;--muted:#9aa2b1;--accent:#6ea0ff;--button:#2f6fde;--error:#ff8a80;--border:#2b3039}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:960px;margin:0 auto;padding:24px}
.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:20px}
h1{font-size:1.15rem;margin:0 0 4px;word-break:break-all}.meta{color:var(--muted);font-size:.9rem;margin:0 0 16px}
.preview img,.preview video{max-width:100%;max-height:75vh;display:block;margin:0 auto;border-radius:8px}
.preview audio{width:100%}.preview iframe{width:100%;height:75vh;border:0;border-radius:8px}
pre{white-space:pre-wrap;word-break:break-word;max-height:70vh;overflow:auto;background:var(--bg);padding:12px;border-radius:8px}
a.button,button{display:inline-block;background:var(--button);color:#fff;border:0;border-radius:8px;padding:10px 16px;font:inherit;text-decoration:none;cursor:pointer}
a.button:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
input{font:inherit;padding:9px 12px;border-radius:8px;border:1px solid var(--border);background:var(--bg);color:var(--fg)}
.actions{margin-top:16px;display:flex;gap:8px;flex-wrap:wrap}
body.minimal main{max-width:none;padding:0}body.minimal .card{border:0;border-radius:0;background:none}
body.delivery .card{max-width:480px;margin:10vh auto;text-align:center}
.error{color:var(--error);min-height:1.5em}
#unlock{display:flex;flex-direction:column;align-items:center;gap:8px}#unlock .actions{margin-top:0;justify-content:center}
pre:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.archive{margin-top:20px}.archive h2{font-size:1rem;margin:0 0 4px}
.tree,.tree ul{list-style:none;margin:0;padding:0}.tree ul{padding-left:18px;border-left:1px solid var(--border);margin-left:6px}
.tree li{padding:2px 0}.tree summary{cursor:pointer;font-weight:600;word-break:break-all}
.tree .file{display:flex;gap:8px;align-items:center;flex-wrap:wrap}.tree .name{word-break:break-all}.tree .size{color:var(--muted);font-size:.85rem}
.tree button{padding:2px 10px;font-size:.85rem;border-radius:6px}
.grid{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(130px,1fr));gap:12px}
.grid a{display:flex;flex-direction:column;gap:4px;color:inherit;text-decoration:none;border:1px solid var(--border);border-radius:8px;padding:8px;height:100%}
.grid a:hover .name{text-decoration:underline}.grid a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.thumb{aspect-ratio:1;display:flex;align-items:center;justify-content:center;background:var(--bg);border-radius:6px;overflow:hidden;color:var(--muted);font-size:.8rem;text-align:center;padding:4px}
.thumb img{width:100%;height:100%;object-fit:cover}.grid .name{word-break:break-all;font-size:.9rem}.grid .size{color:var(--muted);font-size:.8rem}
.pages{display:flex;gap:12px;align-items:center;justify-content:center;margin-top:16px;flex-wrap:wrap}`;

function page(title: string, head: string, body: string, style = 'framed'): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="/favicon.ico">${head}<style>${styles}</style></head><body class="${escapeHtml(style)}"><main>${body}</main></body></html>`;
}

/** The locked page's one script: constant (the unlock URL is in the form's data), so a hash allows it. */
/** What the password form says when the password is refused: by its script, or by the page without one. */
export const unlockMessages = { wrong: 'Wrong password.', throttled: 'Too many attempts; wait up to 15 minutes and try again.', empty: 'Enter the password.', gone: 'This file is no longer shared.' } as const;
/** Why a password sent by the form without its script did not open the file: the share page says it. */
export type UnlockOutcome = keyof typeof unlockMessages;

/** The message of an outcome named in a share page's URL; none for anything else. */
export function unlockMessageOf(outcome: string | undefined): string | undefined {
  return outcome !== undefined && Object.hasOwn(unlockMessages, outcome) ? unlockMessages[outcome as UnlockOutcome] : undefined;
}
// Unlocked, it goes to the share page rather than reloading: the form may be shown at the unlock
// route's URL, after a post without the script, where a reload would post the old password again.
const unlockScript = `const f=document.getElementById('unlock');f.addEventListener('submit',async e=>{e.preventDefault();const r=await fetch(f.dataset.unlockUrl,{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({password:document.getElementById('password').value})});if(r.ok)location.assign(f.dataset.pageUrl);else document.getElementById('error').textContent=r.status===429?((await r.json().catch(()=>({}))).error??${JSON.stringify(unlockMessages.throttled)}):r.status===404?${JSON.stringify(unlockMessages.gone)}:${JSON.stringify(unlockMessages.wrong)}})`;

const hashSource = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The share page's Content-Security-Policy: nothing but its own style and unlock script (by hash),
 * the preview and the unlock request from this instance, and no framing by other sites. Chat apps
 * read the OpenGraph tags and embed the raw URL (og:image, og:video, twitter:player), never this
 * page, so `frame-ancestors 'none'` costs no embed.
 */
export function sharePagePolicy(baseUrl: string): string {
  const own = `'self' ${new URL(baseUrl).origin}`;
  return [
    "default-src 'none'",
    `img-src ${own}`,
    `media-src ${own}`,
    `frame-src ${own}`,
    `connect-src ${own}`,
    `style-src ${hashSource(styles)}`,
    `script-src ${hashSource(unlockScript)}`,
    "form-action 'self'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * "4 Mar 2099, 05:06", in UTC. Written out rather than through Intl.DateTimeFormat: a formatter made
 * when this module loads brought ICU's date data into every server process, about 8 MiB of memory
 * held from the start whether or not a share page was ever served (docs/benchmarks.md, "Memory at
 * rest").
 */
function utcMinute(at: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${two(at.getUTCHours())}:${two(at.getUTCMinutes())}`;
}

/**
 * When the link stops working, for a visitor deciding whether to download now: the page said
 * nothing, then was a 404. In UTC, the one zone the server knows the visitor can read; a `<time>`
 * element carries the exact instant.
 */
function expiryNote(file: Pick<FileRow, 'expiresAt'>): string | null {
  if (file.expiresAt === null) return null;
  const at = new Date(Number(file.expiresAt));
  return `Available until <time datetime="${at.toISOString()}">${utcMinute(at)} UTC</time>`;
}

export function renderSharePage(input: SharePageInput): string {
  const { file } = input;
  const name = escapeHtml(file.name);
  const expiry = expiryNote(file);
  const meta = [escapeHtml(file.mimeType), humanSize(file.size), ...(expiry ? [expiry] : [])].join(' · ');
  if (input.locked) {
    const form = `<div class="card"><h1>${name}</h1><p class="meta">This file is protected by a password.${expiry ? ` ${expiry}` : ''}</p>
<form id="unlock" method="post" action="${escapeHtml(input.unlockUrl)}" data-unlock-url="${escapeHtml(input.unlockUrl)}" data-page-url="${escapeHtml(input.pageUrl)}"><label for="password">Password</label><div class="actions"><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Unlock</button></div><p class="error" id="error" role="alert">${escapeHtml(input.unlockError ?? '')}</p></form></div>
<script>${unlockScript}</script>`;
    return page(`${file.name} · Hoard`, '<meta name="robots" content="noindex">', form, 'delivery');
  }

  const raw = escapeHtml(input.rawUrl);
  // An image the thumbnail job could not read (over MEDIA_MAX_PIXELS, or damaged) is neither shown
  // inline nor offered to unfurlers: a 48 KB PNG of 20,000² pixels would have every visitor's
  // browser, and every chat app, decode 1.6 GB. It can still be downloaded.
  const unreadableImage = previewKind(file.mimeType) === 'image' && file.thumbnailStatus === 'failed';
  const kind = unreadableImage ? null : previewKind(file.mimeType);
  let preview = '';
  if (unreadableImage) preview = '<p class="meta">This image could not be read for a preview (too large, or damaged). Download it to open it.</p>';
  if (kind === 'image') preview = `<img src="${raw}" alt="${name}">`;
  // Named, as the image is by its alt text: a screen reader otherwise says only "video".
  else if (kind === 'video') preview = `<video src="${raw}" controls preload="metadata" aria-label="${name}"></video>`;
  else if (kind === 'audio') preview = `<audio src="${raw}" controls preload="metadata" aria-label="${name}"></audio>`;
  else if (kind === 'pdf') preview = `<iframe src="${raw}" title="${name}"></iframe>`;
  // Focusable, so that a long text scrolls with the keyboard too.
  else if (kind === 'text' && input.textPreview !== null) preview = `<pre tabindex="0" role="region" aria-label="Text of ${name}">${escapeHtml(input.textPreview)}</pre>`;

  const { og, twitter } = embedTags(input, kind);

  const tree = input.archive ? renderArchive(input.archive.manifest, input.archive.entryUrl) : '';
  const body = `<div class="card"><h1>${name}</h1><p class="meta">${meta}</p>${preview ? `<div class="preview">${preview}</div>` : ''}
<div class="actions"><a class="button" href="${escapeHtml(input.downloadUrl)}">Download</a><a class="button" href="${raw}">Open raw</a></div>${tree}</div>`;
  return page(`${file.name} · Hoard`, og + twitter, body, file.shareStyle);
}

/** Image types every chat app's unfurler shows as they are; others (TIFF, AVIF) are shown by their thumbnail. */
const EMBEDDABLE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The largest image offered to unfurlers as itself; a larger one is offered by its thumbnail once it
 * has one. X refuses a card's image above 5 MB, WhatsApp far less, so a phone's photo or a large
 * screenshot unfurled with no picture at all. A GIF stays itself: its thumbnail does not move.
 */
const EMBED_WHOLE_IMAGE_BYTES = 5 * 1024 * 1024;

/**
 * OpenGraph and Twitter tags that make chat apps (Discord, Slack, Telegram…) unfurl the file inline:
 * an image as itself (an animated GIF keeps moving) or by its thumbnail, with its dimensions; a
 * video as a player of the raw URL, with its type, size and thumbnail; a PDF by its first page.
 * Dimensions come from the thumbnail job (contract §10); until it has run, tags without them.
 */
function embedTags(input: SharePageInput, kind: ReturnType<typeof previewKind>): { og: string; twitter: string } {
  const { file, rawUrl } = input;
  const thumbnail = input.thumbnailUrl ?? null;
  const secure = rawUrl.startsWith('https:');
  const size = (prefix: string, width: number | null, height: number | null) =>
    width !== null && height !== null ? [[`${prefix}:width`, String(width)], [`${prefix}:height`, String(height)]] : [];
  const image: string[][] = [];
  const twitterImage: string[][] = [];
  let card = 'summary';
  if (kind === 'image' && EMBEDDABLE_IMAGES.has(file.mimeType) && (file.size <= EMBED_WHOLE_IMAGE_BYTES || file.mimeType === 'image/gif' || thumbnail === null)) {
    image.push(['og:image', rawUrl], ...(secure ? [['og:image:secure_url', rawUrl]] : []), ['og:image:type', file.mimeType], ...size('og:image', file.mediaWidth, file.mediaHeight), ['og:image:alt', file.name]);
    twitterImage.push(['twitter:image', rawUrl]);
    card = 'summary_large_image';
  } else if (thumbnail !== null) {
    image.push(['og:image', thumbnail], ...(secure ? [['og:image:secure_url', thumbnail]] : []), ['og:image:type', 'image/webp'], ...size('og:image', file.thumbnailWidth, file.thumbnailHeight), ['og:image:alt', file.name]);
    twitterImage.push(['twitter:image', thumbnail]);
    if (kind === 'image' || kind === 'pdf') card = 'summary_large_image';
  }
  const og = [
    ['og:title', file.name],
    ['og:type', kind === 'video' ? 'video.other' : 'website'],
    ['og:url', input.pageUrl],
    ['og:site_name', 'Hoard'],
    ['og:description', `${file.mimeType}, ${humanSize(file.size)}`],
    ...image,
    ...(kind === 'video'
      ? [['og:video', rawUrl], ['og:video:url', rawUrl], ...(secure ? [['og:video:secure_url', rawUrl]] : []), ['og:video:type', file.mimeType], ...size('og:video', file.mediaWidth, file.mediaHeight)]
      : []),
    ...(kind === 'audio' ? [['og:audio', rawUrl], ['og:audio:type', file.mimeType]] : []),
  ];
  // X's player card needs the player's size, known once the thumbnail job has run: a player card
  // without it is invalid and dropped, so until then a plain card.
  const player = kind === 'video' && file.mediaWidth !== null && file.mediaHeight !== null;
  const twitter = [
    ['twitter:card', player ? 'player' : card],
    ['twitter:title', file.name],
    ...twitterImage,
    ...(player
      ? [['twitter:player', rawUrl], ...size('twitter:player', file.mediaWidth, file.mediaHeight), ['twitter:player:stream', rawUrl], ['twitter:player:stream:content_type', file.mimeType]]
      : []),
  ];
  return {
    og: og.map(([property, content]) => `<meta property="${property}" content="${escapeHtml(content!)}">`).join(''),
    twitter: twitter.map(([name, content]) => `<meta name="${name}" content="${escapeHtml(content!)}">`).join(''),
  };
}

export interface FolderPageInput {
  folderName: string;
  pageUrl: string;
  total: number;
  page: number;
  pageCount: number;
  /** When the folder's address stops working, or null. */
  expiresAt: number | null;
  /** The ZIP of every listed file and its size, when there is one to offer. */
  zip: { url: string; bytes: number } | null;
  /** `subfolder`: the path of the subfolder a file is in, for a share that lists them; null in the folder itself. */
  files: Array<{ name: string; mimeType: string; size: number; pageUrl: string; thumbnailUrl: string | null; subfolder: string | null }>;
}

/**
 * A shared folder's page (docs/decisions.md, "Sharing a folder"): its public files as a grid of
 * thumbnails (or their type), each linking to the file's own share page, newest first, in pages.
 * Chat apps unfurl it by its name, its count and its newest thumbnail.
 */
export function renderFolderPage(input: FolderPageInput): string {
  // Folder names are the owner's and may hold direction controls, which turn what follows them
  // around for the visitor ("Invoices\u202Efdp.exe" shows as "Invoicesexe.pdf"): shown without them.
  const folderName = withoutDirectionControls(input.folderName);
  const name = escapeHtml(folderName);
  const count = `${input.total} ${input.total === 1 ? 'file' : 'files'}`;
  const items = input.files
    .map((file) => {
      const thumb = file.thumbnailUrl ? `<img src="${escapeHtml(file.thumbnailUrl)}" alt="" loading="lazy">` : escapeHtml(file.mimeType);
      const where = file.subfolder === null ? '' : ` · in ${escapeHtml(withoutDirectionControls(file.subfolder))}`;
      return `<li><a href="${escapeHtml(file.pageUrl)}"><span class="thumb">${thumb}</span><span class="name">${escapeHtml(file.name)}</span><span class="size">${humanSize(file.size)}${where}</span></a></li>`;
    })
    .join('');
  const at = (page: number) => escapeHtml(page === 1 ? input.pageUrl : `${input.pageUrl}?page=${page}`);
  const pages =
    input.pageCount > 1
      ? `<nav class="pages" aria-label="Pages">${input.page > 1 ? `<a class="button" href="${at(input.page - 1)}" rel="prev">Previous</a>` : ''}<span>Page ${input.page} of ${input.pageCount}</span>${input.page < input.pageCount ? `<a class="button" href="${at(input.page + 1)}" rel="next">Next</a>` : ''}</nav>`
      : '';
  const list = input.files.length > 0 ? `<ul class="grid">${items}</ul>` : '<p class="meta">Nothing in this folder is shared with anyone yet.</p>';
  const cover = input.files.find((file) => file.thumbnailUrl !== null)?.thumbnailUrl ?? null;
  const tags = [
    ['og:title', folderName],
    ['og:type', 'website'],
    ['og:url', input.pageUrl],
    ['og:site_name', 'Hoard'],
    ['og:description', `A shared folder of ${count}`],
    ...(cover ? [['og:image', cover], ['og:image:type', 'image/webp']] : []),
  ];
  const head = tags.map(([property, content]) => `<meta property="${property}" content="${escapeHtml(content!)}">`).join('') + `<meta name="twitter:card" content="${cover ? 'summary_large_image' : 'summary'}">`;
  // Said as a file's page says it: a visitor may want the files before the address stops working.
  const until = expiryNote(input);
  const download = input.zip ? `<p><a class="button" href="${escapeHtml(input.zip.url)}" download>Download all (${humanSize(input.zip.bytes)}, ZIP)</a></p>` : '';
  return page(`${folderName} · Hoard`, head, `<div class="card"><h1>${name}</h1><p class="meta">${count}${until ? ` · ${until}` : ''}</p>${download}${list}${pages}</div>`);
}

/** Types and names of the archives the share page lists (contract §9); the reader has the last word. */
const archiveTypes = new Set(['application/zip', 'application/x-zip-compressed', 'application/x-tar', 'application/gzip', 'application/x-gzip', 'application/x-gtar', 'application/x-compressed-tar']);

export function mayBeArchive(file: Pick<FileRow, 'name' | 'mimeType'>): boolean {
  return archiveTypes.has(file.mimeType) || /\.(zip|tar|tgz|tar\.gz)$/i.test(file.name);
}

interface TreeDirectory {
  directories: Map<string, TreeDirectory>;
  files: Array<{ name: string; entry: ArchiveManifest['entries'][number] }>;
}

/**
 * The listed entries as nested directories. Paths are shown as stored (`../x`, `/abs` included):
 * empty segments are dropped for display only, and each button posts the entry's exact path. A
 * directory an entry implies but the archive does not list is shown all the same.
 */
function treeOf(entries: ArchiveManifest['entries']): TreeDirectory {
  const root: TreeDirectory = { directories: new Map(), files: [] };
  for (const entry of entries) {
    const segments = entry.path.split('/').filter((segment) => segment !== '');
    const leaf = entry.directory ? null : (segments.pop() ?? entry.path);
    let directory = root;
    for (const segment of segments) {
      let next = directory.directories.get(segment);
      if (!next) {
        next = { directories: new Map(), files: [] };
        directory.directories.set(segment, next);
      }
      directory = next;
    }
    if (leaf !== null) directory.files.push({ name: leaf, entry });
  }
  return root;
}

const byName = (a: string, b: string) => a.localeCompare(b, 'en');

function renderDirectory(directory: TreeDirectory, depth: number, expanded: boolean): string {
  const items: string[] = [];
  for (const [name, child] of [...directory.directories].sort(([a], [b]) => byName(a, b))) {
    const open = depth === 0 || expanded ? ' open' : '';
    items.push(`<li><details${open}><summary><bdi>${escapeHtml(withoutDirectionControls(name))}</bdi>/</summary>${renderDirectory(child, depth + 1, expanded)}</details></li>`);
  }
  for (const { name, entry } of [...directory.files].sort((a, b) => byName(a.name, b.name))) {
    // A tar's links and special files are listed (the reader marks them) but hold no bytes to send.
    const special = (entry as { special?: string }).special;
    const action = special !== undefined
      ? ''
      : entry.encrypted
      ? '<span class="size">encrypted, cannot be downloaded</span>'
      : `<button type="submit" name="path" value="${escapeHtml(entry.path)}" aria-label="Download ${escapeHtml(withoutDirectionControls(name))}">Download</button>`;
    const size = special === undefined ? humanSize(entry.size) : noBytes(special);
    // Shown without direction controls (src/api/display-text.ts), isolated from the size beside it
    // (a right-to-left name would otherwise pull it in); the button still asks for the path as stored.
    items.push(`<li class="file"><bdi class="name">${escapeHtml(withoutDirectionControls(name))}</bdi><span class="size">${size}</span>${action}</li>`);
  }
  return items.length > 0 ? `<ul>${items.join('')}</ul>` : '';
}

/** What a tar entry without bytes of its own is, in the words extraction skips it with. */
function noBytes(special: string): string {
  if (special === 'symlink') return 'a symbolic link, not a file';
  if (special === 'link') return 'a hard link, not a file';
  return `a special file (${escapeHtml(special)}), not a file`;
}

/** Directories expanded throughout up to this many listed entries; beyond, only the first level. */
const EXPANDED_ENTRIES = 100;

/**
 * The manifest as a tree with a download button per file entry: one form posting the button's
 * `path` to the entry route, so downloading needs no script (the page's CSP allows forms to 'self').
 */
function renderArchive(manifest: ArchiveManifest, entryUrl: string): string {
  const format = manifest.format === 'zip' ? 'ZIP' : 'tar';
  const count = `${manifest.entryCount.toLocaleString('en')} ${manifest.entryCount === 1 ? 'entry' : 'entries'}`;
  const listed = manifest.entries.length;
  const more = listed < manifest.entryCount ? `<p class="meta">The first ${listed.toLocaleString('en')} entries are shown.</p>` : '';
  const tree = renderDirectory(treeOf(manifest.entries), 0, listed <= EXPANDED_ENTRIES).replace(/^<ul>/, '<ul class="tree">');
  return `<section class="archive" aria-label="Archive contents"><h2>Contents</h2><p class="meta">${format} archive · ${count} · ${humanSize(manifest.totalSize)} uncompressed</p>
<form method="post" action="${escapeHtml(entryUrl)}">${tree}</form>${more}</section>`;
}

export function renderNotFoundPage(heading = 'Not found', text = 'There is nothing here, or it is not shared.'): string {
  return page(`${heading} · Hoard`, '<meta name="robots" content="noindex">', `<div class="card"><h1>${escapeHtml(heading)}</h1><p class="meta">${escapeHtml(text)}</p></div>`, 'delivery');
}
