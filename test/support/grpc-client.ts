// A small gRPC client for tests: calls one method of lf.a2a.v1.A2AService over real HTTP/2 (@grpc/grpc-js) with its
// messages written and read against the specification's proto (not the served one), and reports what a client
// observes: the status code, the trailing metadata as headers, the result as ProtoJSON, or the error's message with its
// google.rpc details decoded into the JSON form the HTTP bindings send. Streaming calls record their events.

import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type { A2aMethod } from "../../src/protocol/index.ts";
import { a2aRegistry } from "./proto-json.ts";

/** Each method's request and response message (the proto's service block). */
const MESSAGES: Record<A2aMethod, [string, string]> = {
  SendMessage: ["SendMessageRequest", "SendMessageResponse"],
  SendStreamingMessage: ["SendMessageRequest", "StreamResponse"],
  GetTask: ["GetTaskRequest", "Task"],
  ListTasks: ["ListTasksRequest", "ListTasksResponse"],
  CancelTask: ["CancelTaskRequest", "Task"],
  SubscribeToTask: ["SubscribeToTaskRequest", "StreamResponse"],
  CreateTaskPushNotificationConfig: ["TaskPushNotificationConfig", "TaskPushNotificationConfig"],
  GetTaskPushNotificationConfig: ["GetTaskPushNotificationConfigRequest", "TaskPushNotificationConfig"],
  ListTaskPushNotificationConfigs: [
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
  ],
  GetExtendedAgentCard: ["GetExtendedAgentCardRequest", "AgentCard"],
  DeleteTaskPushNotificationConfig: ["DeleteTaskPushNotificationConfigRequest", "google.protobuf.Empty"],
};

function schemaOf(name: string) {
  const schema = a2aRegistry().getMessage(name.includes(".") ? name : `lf.a2a.v1.${name}`);
  if (!schema) throw new Error(`${name} is not in a2a.proto`);
  return schema;
}

export interface GrpcOptions {
  key?: string | undefined;
  /** The a2a-version metadata (default 1.0); null sends none. */
  version?: string | null;
  /** Sent as the request's tenant (the profile it addresses); none: the first profile. */
  profile?: string;
  metadata?: Record<string, string>;
}

/** What a gRPC call observed: `status` is the gRPC code; `body` the result, or `{error: {message, details}}`. */
export interface GrpcAnswer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary answers
  body: any;
}

const clients = new Map<string, Client>();

function clientOf(address: string): Client {
  let client = clients.get(address);
  if (!client) {
    client = new Client(address, credentials.createInsecure());
    clients.set(address, client);
  }
  return client;
}

/** Closes the channels this module opened. */
export function closeGrpcClients(): void {
  for (const client of clients.values()) client.close();
  clients.clear();
}

function metadataOf(options: GrpcOptions): Metadata {
  const metadata = new Metadata();
  if (options.key !== undefined) metadata.set("authorization", `Bearer ${options.key}`);
  const version = options.version === undefined ? "1.0" : options.version;
  if (version !== null) metadata.set("a2a-version", version);
  for (const [name, value] of Object.entries(options.metadata ?? {})) metadata.set(name, value);
  return metadata;
}

function requestBytes(method: A2aMethod, params: unknown, options: GrpcOptions): Buffer {
  const json = { ...(params as Record<string, unknown>) };
  if (options.profile !== undefined) json.tenant = options.profile;
  return Buffer.from(
    toBinary(schemaOf(MESSAGES[method][0]), fromJson(schemaOf(MESSAGES[method][0]), json as JsonValue)),
  );
}

function strings(reader: BinaryReader): [number, string][] {
  const fields: [number, string][] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (wireType === 2) fields.push([field, reader.string()]);
    else reader.skip(wireType, field);
  }
  return fields;
}

/** A google.rpc detail in its JSON form. */
function detailJson(typeUrl: string, value: Uint8Array): Record<string, unknown> {
  const json: Record<string, unknown> = { "@type": typeUrl };
  if (typeUrl.endsWith("google.rpc.ErrorInfo")) {
    const info = decodeErrorInfo(Buffer.from(value));
    Object.assign(json, { reason: info.reason, domain: info.domain });
    if (info.metadata && Object.keys(info.metadata).length > 0) json.metadata = info.metadata;
  } else if (typeUrl.endsWith("google.rpc.RetryInfo")) {
    const reader = new BinaryReader(value);
    reader.tag();
    const duration = new BinaryReader(reader.bytes());
    duration.tag();
    json.retryDelay = `${duration.int64()}s`;
  } else if (typeUrl.endsWith("google.rpc.BadRequest")) {
    const reader = new BinaryReader(value);
    const violations: { field: string; description: string }[] = [];
    while (reader.pos < reader.len) {
      reader.tag();
      const fields = Object.fromEntries(strings(new BinaryReader(reader.bytes())));
      violations.push({ field: fields[1] ?? "", description: fields[2] ?? "" });
    }
    json.fieldViolations = violations;
  }
  return json;
}

function headersOf(metadata: Metadata | undefined): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(metadata?.getMap() ?? {})) {
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

/** The answer of a failed call: its message and decoded details, as the HTTP bindings write them. */
export function errorAnswer(error: ServiceError): GrpcAnswer {
  const bin = error.metadata?.get("grpc-status-details-bin")[0];
  const details =
    bin === undefined
      ? []
      : decodeStatus(Buffer.from(bin)).details.map((detail) => detailJson(detail.typeUrl, detail.value));
  const body = { error: { message: error.details, ...(details.length > 0 ? { details } : {}) } };
  return { status: error.code, headers: headersOf(error.metadata), body };
}

/** Calls one unary method (a streaming one is read to its end: `body` is then its list of events). */
export function grpcCall(
  address: string,
  method: A2aMethod,
  params: unknown,
  options: GrpcOptions = {},
): Promise<GrpcAnswer> {
  const [, output] = MESSAGES[method];
  const path = `/lf.a2a.v1.A2AService/${method}`;
  const decode = (bytes: Buffer) => toJson(schemaOf(output), fromBinary(schemaOf(output), bytes));
  const client = clientOf(address);
  if (method === "SendStreamingMessage" || method === "SubscribeToTask") {
    return openGrpcStream(address, method, params, options).then(async (stream) => {
      await stream.closed;
      return stream.error ?? { status: status.OK, headers: new Headers(), body: stream.events };
    });
  }
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      requestBytes(method, params, options),
      metadataOf(options),
      (error, bytes) => {
        if (error) resolve(errorAnswer(error));
        else resolve({ status: status.OK, headers: new Headers(), body: decode(bytes as Buffer) });
      },
    );
  });
}

/** A server stream being read: its events as ProtoJSON, and its error status when it ended with one. */
export interface GrpcStreamRecording {
  // biome-ignore lint/suspicious/noExplicitAny: see GrpcAnswer
  readonly events: any[];
  error: GrpcAnswer | undefined;
  ended: boolean;
  readonly closed: Promise<void>;
  waitForEvents(count: number, timeoutMs?: number): Promise<void>;
  abort(): void;
}

/** Starts a streaming call; resolves at once (its events and end arrive as they come). */
export async function openGrpcStream(
  address: string,
  method: "SendStreamingMessage" | "SubscribeToTask",
  params: unknown,
  options: GrpcOptions = {},
): Promise<GrpcStreamRecording> {
  const schema = schemaOf("StreamResponse");
  const call = clientOf(address).makeServerStreamRequest(
    `/lf.a2a.v1.A2AService/${method}`,
    (bytes: Buffer) => bytes,
    (bytes: Buffer) => bytes,
    requestBytes(method, params, options),
    metadataOf(options),
  );
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  let markClosed!: () => void;
  const recording: GrpcStreamRecording = {
    events: [],
    error: undefined,
    ended: false,
    closed: new Promise((resolve) => {
      markClosed = resolve;
    }),
    waitForEvents(count, timeoutMs = 5000) {
      if (recording.events.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${count} events did not arrive in ${timeoutMs} ms (${recording.events.length})`));
        }, timeoutMs);
        const check = () => {
          if (recording.events.length < count && !recording.ended) return;
          clearTimeout(timer);
          waiters.delete(check);
          if (recording.events.length >= count) resolve();
          else reject(new Error(`the stream ended after ${recording.events.length} events`));
        };
        waiters.add(check);
      });
    },
    abort: () => call.cancel(),
  };
  call.on("data", (bytes: Buffer) => {
    recording.events.push(toJson(schema, fromBinary(schema, bytes)));
    wake();
  });
  call.on("error", (error: ServiceError) => {
    if (error.code !== status.CANCELLED) recording.error = errorAnswer(error);
  });
  call.on("status", () => {
    recording.ended = true;
    wake();
    markClosed();
  });
  return recording;
}
