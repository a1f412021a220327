/**
 * The upload baseline: a bare node:http server that pipes each request body, as it arrives, to a new
 * file in DIR (the same filesystem as Hoard's DATA_DIR) and answers 201 when the last byte is
 * written. No parsing, hashing or fsync: the most a Node process can do with the same bytes.
 *   PORT=… DIR=… node bench/servers/baseline-upload.ts
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

const dir = process.env.DIR!;
let sequence = 0;
const server = http.createServer((request, response) => {
  if (request.method === 'GET') return void response.end('ok');
  const file = path.join(dir, `upload-${process.pid}-${++sequence}`);
  pipeline(request, fs.createWriteStream(file)).then(
    () => {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ file, bytes: fs.statSync(file).size }));
    },
    (error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    },
  );
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
