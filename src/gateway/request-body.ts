// Reads a request body with a hard size cap (Content-Length is used to refuse early, never trusted to accept) and
// parses it as JSON no deeper than a limit, checked on the bytes before the parser sees them; the errors are the
// protocol's (PAYLOAD_TOO_LARGE, INVALID_REQUEST, PARSE_ERROR).
import { InvalidRequestError, ParseError, PayloadTooLargeError } from "../protocol/index.ts";

/** The body's bytes; throws PayloadTooLargeError as soon as more than `limitBytes` arrive. */
export async function readCappedBody(request: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (request.body === null) return new Uint8Array(0);
  if (declared !== null && /^\d+$/.test(declared)) {
    // Content-Length framing: the runtime reads exactly the declared bytes, which were checked above, so the body is
    // read in one call (a stream reader costs ~15% of the accept path's CPU); the length is checked again anyway.
    const body = new Uint8Array(await request.arrayBuffer());
    if (body.byteLength > limitBytes) throw new PayloadTooLargeError(limitBytes);
    return body;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limitBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

const DECODER = new TextDecoder("utf-8", { fatal: true });

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of objects and arrays in JSON text, counted on its bytes in one pass (brackets inside strings do
 * not count; a UTF-8 continuation byte is never one of these ASCII bytes). Stops counting once it passes `stopAbove`.
 * Malformed text gets some number: the parser refuses it afterwards.
 */
export function jsonDepth(bytes: Uint8Array, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
  }
  return deepest;
}

/** Refused: nesting deeper than the limit, before the parser ran (a deep document costs the parser and every reader). */
export class NestingTooDeepError extends InvalidRequestError {
  constructor(maxDepth: number) {
    super(`JSON nesting is deeper than ${maxDepth} levels`);
  }
}

/**
 * Parses UTF-8 JSON no deeper than `maxDepth` (NestingTooDeepError, -32600, before parsing); anything that is not
 * JSON (bad bytes, bad syntax, an empty body) is ParseError (-32700).
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number): unknown {
  if (jsonDepth(bytes, maxDepth) > maxDepth) throw new NestingTooDeepError(maxDepth);
  try {
    return JSON.parse(DECODER.decode(bytes));
  } catch {
    throw new ParseError();
  }
}
