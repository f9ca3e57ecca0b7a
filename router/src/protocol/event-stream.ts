import { crc32 } from 'node:zlib';

/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream) that
 * InvokeEndpointWithResponseStream answers with, so the AWS SDK's `ResponseStream` iterator reads our
 * responses. One message:
 *
 *   total length (u32 BE) | headers length (u32 BE) | CRC32 of the previous 8 bytes
 *   headers: name length (u8) | name | value type (u8, 7 = string) | value length (u16 BE) | value
 *   payload
 *   CRC32 of everything before it
 */
export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

const STRING_TYPE = 7;
const PRELUDE_BYTES = 12;

export type EventStreamHeaders = ReadonlyArray<readonly [name: string, value: string]>;

export function encodeHeaders(headers: EventStreamHeaders): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    if (nameBytes.length > 255) throw new RangeError(`event-stream header name too long: ${name}`);
    if (valueBytes.length > 32767) throw new RangeError(`event-stream header value too long for ${name}`);
    const head = Buffer.allocUnsafe(1 + nameBytes.length + 3);
    head.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(head, 1);
    head.writeUInt8(STRING_TYPE, 1 + nameBytes.length);
    head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    parts.push(head, valueBytes);
  }
  return Buffer.concat(parts);
}

/** Frames one message from pre-encoded headers (see encodeHeaders) and a payload. */
export function encodeMessage(encodedHeaders: Uint8Array, payload: Uint8Array): Buffer {
  const total = PRELUDE_BYTES + encodedHeaders.length + payload.length + 4;
  const out = Buffer.allocUnsafe(total);
  out.writeUInt32BE(total, 0);
  out.writeUInt32BE(encodedHeaders.length, 4);
  out.writeUInt32BE(crc32(out.subarray(0, 8)), 8);
  out.set(encodedHeaders, PRELUDE_BYTES);
  out.set(payload, PRELUDE_BYTES + encodedHeaders.length);
  out.writeUInt32BE(crc32(out.subarray(0, total - 4)), total - 4);
  return out;
}

const PAYLOAD_PART_HEADERS = encodeHeaders([
  [':event-type', 'PayloadPart'],
  [':content-type', 'application/octet-stream'],
  [':message-type', 'event'],
]);

/** A `PayloadPart` event carrying a slice of the model's response bytes. */
export function payloadPartMessage(bytes: Uint8Array): Buffer {
  return encodeMessage(PAYLOAD_PART_HEADERS, bytes);
}

/** A terminal `ModelStreamError` exception: the SDK's iterator throws ModelStreamError with these fields. */
export function modelStreamErrorMessage(message: string, errorCode: string): Buffer {
  const headers = encodeHeaders([
    [':exception-type', 'ModelStreamError'],
    [':content-type', 'application/json'],
    [':message-type', 'exception'],
  ]);
  return encodeMessage(headers, Buffer.from(JSON.stringify({ Message: message, ErrorCode: errorCode }), 'utf8'));
}

export interface DecodedMessage {
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: Buffer;
}

/**
 * Splits a complete event-stream byte sequence into messages, verifying both CRCs. Used by tests and the
 * benchmark to read responses without the AWS SDK; throws on any framing error.
 */
export function decodeMessages(bytes: Buffer): DecodedMessage[] {
  const messages: DecodedMessage[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < PRELUDE_BYTES + 4) throw new Error('truncated event-stream message');
    const total = bytes.readUInt32BE(offset);
    const headersLength = bytes.readUInt32BE(offset + 4);
    if (total < PRELUDE_BYTES + 4 + headersLength || offset + total > bytes.length) {
      throw new Error('invalid event-stream message length');
    }
    if (bytes.readUInt32BE(offset + 8) !== crc32(bytes.subarray(offset, offset + 8)))
      throw new Error('prelude CRC mismatch');
    if (bytes.readUInt32BE(offset + total - 4) !== crc32(bytes.subarray(offset, offset + total - 4))) {
      throw new Error('message CRC mismatch');
    }
    const headers: Record<string, string> = {};
    let h = offset + PRELUDE_BYTES;
    const headersEnd = h + headersLength;
    while (h < headersEnd) {
      const nameLength = bytes.readUInt8(h);
      const name = bytes.toString('utf8', h + 1, h + 1 + nameLength);
      const type = bytes.readUInt8(h + 1 + nameLength);
      if (type !== STRING_TYPE) throw new Error(`unsupported event-stream header type ${type}`);
      const valueLength = bytes.readUInt16BE(h + 2 + nameLength);
      headers[name] = bytes.toString('utf8', h + 4 + nameLength, h + 4 + nameLength + valueLength);
      h += 4 + nameLength + valueLength;
    }
    messages.push({ headers, payload: Buffer.from(bytes.subarray(headersEnd, offset + total - 4)) });
    offset += total;
  }
  return messages;
}
