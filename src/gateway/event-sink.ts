// Where a stream's events go: the EventSink a TaskStream writes to, and its framed form: a transport's stream (an SSE
// response, a gRPC server stream) registered with the process's stream hub, the binding's framing and the frame cap. A
// binding chooses the framing and the transport; the task stream knows neither.
import { type DescribedError, describeError, type StreamResponse } from "../protocol/index.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { type FramePosition, fittingFrames, STREAM_END_KEY } from "./sse-frames.ts";
import { SseStream, type StreamEnd } from "./sse-stream.ts";
import type { HubStream } from "./stream-hub.ts";

/** The receiving end of one stream of StreamResponses. */
export interface EventSink {
  /** False once the stream has ended. */
  readonly open: boolean;
  /** The client has not taken what was sent: stop sending until onDrain. */
  readonly full: boolean;
  /** Sends one event; `position` is where the stream stands after it (for a stand-in when the event is too large). */
  send(event: StreamResponse, position: FramePosition): void;
  /** Sends the failure in the binding's error form and ends the stream. */
  fail(error: unknown): void;
  end(how: StreamEnd): void;
  /** Calls `listener` once, the next time the client has taken what was queued. */
  onDrain(listener: () => void): void;
  /** Calls `listener` once when the stream ends (at once when it has ended). */
  onEnd(listener: (end: StreamEnd) => void): void;
}

/** How one binding writes events and a final error into the frames of its transport. */
export interface SseFraming {
  event(event: StreamResponse): Uint8Array;
  error(error: DescribedError): Uint8Array;
}

/** A transport's stream as a sink: what the binding's framing writes, under the hub's watch. */
export interface FramedStream extends HubStream {
  /** Sends the framing's error frame (a transport with a status of its own sends `error` as that) and ends. */
  fail(frame: Uint8Array, error: DescribedError): void;
  onDrain(listener: () => void): void;
}

export class FramedEventSink implements EventSink {
  /** Where the stream stood after the last event sent. */
  private last: FramePosition | undefined;

  /** Registers the client's stream with the hub; it closes for running past server.streamMaxSeconds. */
  constructor(
    private readonly context: GatewayContext,
    private readonly framing: SseFraming,
    private readonly stream: FramedStream,
    clientId: string,
  ) {
    // Closed for running past server.streamMaxSeconds, a stream says so in a last event: the task's state as it was
    // sent last, with the reason in its metadata (the task goes on; SubscribeToTask starts a new stream).
    const seconds = context.config.server.streamMaxSeconds;
    this.stream.farewell = () => {
      const last = this.last;
      if (last === undefined) return undefined;
      const metadata = { [STREAM_END_KEY]: { reason: "streamMaxSeconds", streamMaxSeconds: seconds } };
      const { taskId, contextId, state } = last;
      return this.framing.event({ statusUpdate: { taskId, contextId, status: { state }, metadata } });
    };
    context.streams.add(this.stream, clientId);
  }

  get open(): boolean {
    return this.stream.open;
  }

  get full(): boolean {
    return this.stream.full;
  }

  send(event: StreamResponse, position: FramePosition): void {
    const maxBytes = this.context.config.server.streamFrameMaxBytes;
    const { frames, replaced } = fittingFrames((value) => this.framing.event(value), event, position, maxBytes);
    if (replaced) this.context.logger.info({ taskId: position.taskId, rev: position.rev }, "stream event too large");
    for (const frame of frames) this.stream.write(frame);
    this.last = position;
  }

  fail(error: unknown): void {
    const described = describeError(error);
    if (described.unexpected) this.context.logger.error({ err: error }, "stream failed");
    this.stream.fail(this.framing.error(described), described);
  }

  end(how: StreamEnd): void {
    this.stream.end(how);
  }

  onDrain(listener: () => void): void {
    this.stream.onDrain(listener);
  }

  onEnd(listener: (end: StreamEnd) => void): void {
    this.stream.onEnd(listener);
  }
}

/** A stream of SSE frames: the HTTP response of the JSON-RPC and HTTP+JSON bindings' streaming methods. */
export class SseEventSink extends FramedEventSink {
  private readonly sse: SseStream;

  /** Opens the SSE response of a client's stream (headers leave with its first comment) and registers it with the hub. */
  constructor(context: GatewayContext, framing: SseFraming, signal: AbortSignal, clientId: string) {
    const sse = new SseStream(context.config.server.streamBufferMaxBytes, signal);
    super(context, framing, sse, clientId);
    this.sse = sse;
  }

  /** The HTTP response whose body is this stream. */
  get response(): Response {
    return this.sse.response;
  }
}
