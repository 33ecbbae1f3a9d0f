// Reads a JSON-RPC request body with a hard size cap (Content-Length is used to refuse early, never trusted to accept)
// and parses it; the errors are the JSON-RPC ones (-32600 with HTTP 413, -32700).
import { ParseError, PayloadTooLargeError } from "../protocol/index.ts";

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

/** Parses UTF-8 JSON; anything else (bad bytes, bad syntax, an empty body) is ParseError (-32700). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(DECODER.decode(bytes));
  } catch {
    throw new ParseError();
  }
}
