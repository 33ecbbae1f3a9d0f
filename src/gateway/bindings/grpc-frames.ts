// The gRPC binding's framing: an error as a gRPC status (the code from the error table's grpcStatus column, the message
// as its details, a google.rpc.Status with ErrorInfo, BadRequest or RetryInfo in `grpc-status-details-bin`, and the
// table's headers as metadata), each stream event as one StreamResponse message, and a server stream the stream hub
// watches like an SSE response (its buffer cap, duration, revocation), ending with a status instead of an error event.
import { Metadata, type ServerWritableStream, status as StatusCode, type StatusObject } from "@grpc/grpc-js";
import { encodeMessage, encodeStatus, type GrpcMethod } from "../../protocol/grpc.ts";
import type { DescribedError } from "../../protocol/index.ts";
import type { FramedStream, SseFraming } from "../event-sink.ts";
import type { StreamEnd } from "../sse-stream.ts";

/** The trailer that carries the google.rpc.Status of an error. */
export const STATUS_DETAILS_TRAILER = "grpc-status-details-bin";

export type GrpcError = StatusObject;

/** The gRPC status of an error answer. */
export function grpcError(described: DescribedError): GrpcError {
  const code = StatusCode[described.row.grpcStatus];
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_TRAILER, Buffer.from(encodeStatus(code, described)));
  for (const [name, value] of Object.entries(described.headers)) metadata.set(name.toLowerCase(), value);
  return { code, details: described.message, metadata };
}

/** A stream's events as `method`'s response messages; its failure is the stream's status, not a frame. */
export function grpcFraming(method: GrpcMethod): SseFraming {
  return {
    event: (event) => encodeMessage(method.output, event),
    error: () => new Uint8Array(0),
  };
}

/** The status of a stream the gateway cuts while its task goes on. */
const CUT: Partial<Record<StreamEnd, { code: StatusCode; details: string }>> = {
  overflow: { code: StatusCode.RESOURCE_EXHAUSTED, details: "The client did not read its stream; it was closed" },
  revoked: { code: StatusCode.UNAUTHENTICATED, details: "The client's key was revoked" },
};

/**
 * A server stream of StreamResponse messages. Its buffer counts the bytes handed to the call and not yet taken by the
 * HTTP/2 stream (which takes them only as the client's flow-control window allows). Keep-alive is HTTP/2's own ping.
 */
export class GrpcStream implements FramedStream {
  readonly openedAt = performance.now();
  lastWriteAt = this.openedAt;
  fullSince: number | undefined;
  farewell: (() => Uint8Array | undefined) | undefined;
  private queued = 0;
  private endedAs: StreamEnd | undefined;
  private readonly endListeners: ((end: StreamEnd) => void)[] = [];
  private drainListener: (() => void) | undefined;

  constructor(
    private readonly call: ServerWritableStream<Buffer, Buffer>,
    readonly bufferMaxBytes: number,
  ) {
    if (call.cancelled) this.end("clientGone");
    else call.once("cancelled", () => this.end("clientGone"));
  }

  get open(): boolean {
    return this.endedAs === undefined;
  }

  get queuedBytes(): number {
    return this.open ? this.queued : 0;
  }

  get full(): boolean {
    return this.open && this.queued > this.bufferMaxBytes;
  }

  write(bytes: Uint8Array): boolean {
    if (!this.open) return false;
    const size = bytes.byteLength;
    this.queued += size;
    this.call.write(Buffer.from(bytes.buffer, bytes.byteOffset, size), () => {
      this.queued -= size;
      if (this.queued > this.bufferMaxBytes) return;
      const listener = this.drainListener;
      this.drainListener = undefined;
      listener?.();
    });
    this.lastWriteAt = performance.now();
    return true;
  }

  keepalive(): void {}

  onDrain(listener: () => void): void {
    this.drainListener = listener;
  }

  onEnd(listener: (end: StreamEnd) => void): void {
    if (this.endedAs !== undefined) listener(this.endedAs);
    else this.endListeners.push(listener);
  }

  fail(_frame: Uint8Array, error: DescribedError): void {
    this.finish("failed", grpcError(error));
  }

  /** Ends the stream once: OK when the task reached a closing state (or the stream its duration), else a status. */
  end(how: StreamEnd): void {
    const cut = CUT[how];
    this.finish(how, cut === undefined ? undefined : { ...cut, metadata: new Metadata() });
  }

  private finish(how: StreamEnd, status: GrpcError | undefined): void {
    if (this.endedAs !== undefined) return;
    this.endedAs = how;
    this.drainListener = undefined;
    if (how !== "clientGone") {
      if (status === undefined) this.call.end();
      else this.call.emit("error", status);
    }
    for (const listener of this.endListeners.splice(0)) listener(how);
  }
}
