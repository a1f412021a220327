'use strict';
// The API of buffer-crc32 1.x (what yazl calls), computed by node:zlib's native crc32. yazl takes the
// CRC-32 of every byte of every archive Hoard makes; the JavaScript implementation made it the most
// expensive step of creating a ZIP (docs/benchmarks.md, "Archives").
const { crc32 } = require('node:zlib');

function bytes(input) {
  return Buffer.isBuffer(input) || input instanceof Uint8Array ? input : Buffer.from(String(input));
}

function start(previous) {
  if (previous === undefined || previous === null) return 0;
  if (Buffer.isBuffer(previous)) return previous.readUInt32BE(0);
  return previous >>> 0;
}

function unsigned(input, previous) {
  return crc32(bytes(input), start(previous));
}

function signed(input, previous) {
  return unsigned(input, previous) | 0;
}

/** The CRC as a 4-byte big-endian Buffer, as buffer-crc32's default export returns it. */
function bufferCrc32(input, previous) {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(unsigned(input, previous), 0);
  return out;
}

bufferCrc32.unsigned = unsigned;
bufferCrc32.signed = signed;
module.exports = bufferCrc32;
module.exports.default = bufferCrc32;
