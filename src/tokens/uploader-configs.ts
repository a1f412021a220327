/**
 * Uploader configurations for the legacy account credential. Each embeds the credential, so
 * regenerating it invalidates every configuration generated before.
 */

import type { ShareXShortener, ShareXUploader } from '../api/tokens.ts';

export function sharexConfig(baseUrl: string, uploadToken: string, instanceName: string): ShareXUploader {
  return {
    Version: '16.1.0',
    Name: `Hoard (${instanceName})`,
    DestinationType: 'ImageUploader, TextUploader, FileUploader',
    RequestMethod: 'POST',
    RequestURL: `${baseUrl}/api/files`,
    Headers: { Authorization: `Bearer ${uploadToken}` },
    Body: 'MultipartFormData',
    FileFormName: 'file',
    URL: '{json:data.url}',
    ThumbnailURL: '{json:data.rawUrl}',
    ErrorMessage: '{json:error}',
  };
}

/**
 * ShareX's URL shortener destination, which the uploader above cannot serve: it sends the URL as a
 * JSON body to POST /api/urls, whose answer (spec, Resources: Short link) carries the short code
 * alone, so the link is built from the public address `{base_url}/u/<shortCode>`. ShareX
 * JSON-escapes `{input}` in a JSON body.
 */
export function sharexShortenerConfig(baseUrl: string, uploadToken: string, instanceName: string): ShareXShortener {
  return {
    Version: '16.1.0',
    Name: `Hoard links (${instanceName})`,
    DestinationType: 'URLShortener',
    RequestMethod: 'POST',
    RequestURL: `${baseUrl}/api/urls`,
    Headers: { Authorization: `Bearer ${uploadToken}` },
    Body: 'JSON',
    Data: '{"url":"{input}"}',
    URL: `${baseUrl}/u/{json:data.shortCode}`,
    ErrorMessage: '{json:error}',
  };
}

const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** Extracts data.url from the JSON answer without needing jq on the machine. */
const extractUrl = `sed -n 's/.*"url":"\\([^"]*\\)".*/\\1/p'`;

export function bashScript(baseUrl: string, uploadToken: string): string {
  return `#!/usr/bin/env bash
# Hoard uploader: uploads each file given and prints its link.
# Usage: hoard-upload.sh FILE [FILE...]
set -euo pipefail
HOARD_URL=${shellQuote(baseUrl)}
HOARD_TOKEN=${shellQuote(uploadToken)}

if [ "$#" -eq 0 ]; then
  echo "usage: $0 FILE [FILE...]" >&2
  exit 2
fi

headers=$(mktemp)
trap 'rm -f "$headers"' EXIT
status=0
for file in "$@"; do
  if [ ! -f "$file" ]; then
    echo "$file: not a file" >&2
    status=1
    continue
  fi
  # curl's -F reads ; and , in a file name as its own syntax and trims its spaces: the name goes
  # in double quotes, with its backslashes and double quotes escaped.
  quoted=\${file//\\\\/\\\\\\\\}
  quoted=\${quoted//\\"/\\\\\\"}
  # More than 30 uploads a minute from one address are refused for a while (429): the script waits
  # as long as the server says (Retry-After) and tries again, rather than failing the rest of a batch.
  tries=0
  while :; do
    response=$(curl -sS -D "$headers" -w '\\n%{http_code}' -H "Authorization: Bearer $HOARD_TOKEN" -F "file=@\\"$quoted\\"" "$HOARD_URL/api/files") || { response=$'\\n'000; break; }
    code=\${response##*$'\\n'}
    [ "$code" = "429" ] && [ "$tries" -lt 5 ] || break
    pause=$(sed -n 's/^[Rr][Ee][Tt][Rr][Yy]-[Aa][Ff][Tt][Ee][Rr]: *\\([0-9][0-9]*\\).*/\\1/p' "$headers" | tail -n 1)
    echo "$file: too many uploads a minute; trying again in \${pause:-60} s" >&2
    sleep "\${pause:-60}"
    tries=$((tries + 1))
  done
  code=\${response##*$'\\n'}
  body=\${response%$'\\n'*}
  if [ "$code" = "000" ]; then
    echo "$file: upload failed: Hoard could not be reached" >&2
    status=1
    continue
  fi
  if [ "$code" != "200" ]; then
    echo "$file: upload failed ($code): $body" >&2
    status=1
    continue
  fi
  printf '%s\\n' "$body" | ${extractUrl}
done
exit $status
`;
}

export function flameshotScript(baseUrl: string, uploadToken: string): string {
  return `#!/usr/bin/env bash
# Hoard + Flameshot: take a screenshot, upload it, copy the link to the clipboard.
set -euo pipefail
HOARD_URL=${shellQuote(baseUrl)}
HOARD_TOKEN=${shellQuote(uploadToken)}

# The name sent is screenshot.png whatever the file is called: plain mktemp, which macOS has too.
shot=$(mktemp)
trap 'rm -f "$shot"' EXIT
flameshot gui --raw > "$shot"
[ -s "$shot" ] || exit 0
notify() { command -v notify-send >/dev/null 2>&1 && notify-send "Hoard" "$1" || true; }
response=$(curl -sS -w '\\n%{http_code}' -H "Authorization: Bearer $HOARD_TOKEN" -F "file=@$shot;type=image/png;filename=screenshot.png" "$HOARD_URL/api/files") || { notify "Upload failed: Hoard could not be reached"; exit 1; }
code=\${response##*$'\\n'}
body=\${response%$'\\n'*}
if [ "$code" != "200" ]; then
  # The server says what went wrong (a size limit, the quota); a credential regenerated since is
  # its generic "Unauthorized": download the script again from the Integrations page.
  notify "Upload failed ($code): $body"
  echo "upload failed ($code): $body" >&2
  exit 1
fi
url=$(printf '%s\\n' "$body" | ${extractUrl})
if command -v wl-copy >/dev/null 2>&1; then printf '%s' "$url" | wl-copy
elif command -v xclip >/dev/null 2>&1; then printf '%s' "$url" | xclip -selection clipboard
fi
notify "$url"
printf '%s\\n' "$url"
`;
}
