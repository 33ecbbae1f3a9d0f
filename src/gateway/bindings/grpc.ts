// The gRPC binding: every method of lf.a2a.v1.A2AService, in a fixed order: profile (the a2a-profile metadata, else the
// request's tenant read from its top-level fields, else the first profile) → credentials (metadata only) → permission →
// rate → a2a-version → message (its size capped, then decoded, under the nesting limit) → params → operation. The steps and the
// operations are the other bindings' own; only the framing differs: statuses from the error table, one StreamResponse
// message per event.
import type {
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  sendUnaryData,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { decodeRequest, encodeMessage, GRPC_METHODS, type GrpcMethod, peekTenant } from "../../protocol/grpc.ts";
import { InvalidRequestError, PayloadTooLargeError, ProfileNotFoundError } from "../../protocol/index.ts";
import { FramedEventSink, type SseFraming } from "../event-sink.ts";
import type { GatewayContext, ProfileRuntime } from "../gateway-context.ts";
import { NestingTooDeepError } from "../request-body.ts";
import { admitRequest, checkedParams, RequestAccount, type RequestHead } from "../request-steps.ts";
import { type Answer, runOperation } from "../run-operation.ts";
import { StoreDeadline } from "../store-deadline.ts";
import { GrpcStream, grpcError, grpcFraming } from "./grpc-frames.ts";

/** The metadata entry that names a profile, for clients that cannot set a request's tenant. */
export const PROFILE_METADATA = "a2a-profile";

type Call = ServerUnaryCall<Buffer, Buffer> | ServerWritableStream<Buffer, Buffer>;

/** The call's metadata as the headers the request steps read (binary entries left out). */
function headersOf(call: Call): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(call.metadata.getMap())) {
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

/** The name of the profile a call addresses: a2a-profile, else the tenant, else the first profile. */
function profileName(context: GatewayContext, method: GrpcMethod, headers: Headers, bytes: Uint8Array): string {
  const named = headers.get(PROFILE_METADATA)?.trim() ?? "";
  const tenant = peekTenant(method, bytes);
  if (named !== "" && tenant !== "" && named !== tenant) {
    throw new InvalidRequestError(`The tenant ${tenant} and the ${PROFILE_METADATA} metadata ${named} differ`);
  }
  return named || tenant || (context.profiles.keys().next().value ?? "");
}

function profileNamed(context: GatewayContext, name: string): ProfileRuntime {
  const profile = context.profiles.get(name);
  if (!profile) throw new ProfileNotFoundError(name);
  return profile;
}

/** The deepest nesting of objects and arrays in a decoded message, counted up to `stopAbove` + 1. */
function depthOf(value: unknown, stopAbove: number, depth = 0): number {
  if (typeof value !== "object" || value === null) return depth;
  if (depth + 1 > stopAbove) return depth + 1;
  let deepest = depth + 1;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    deepest = Math.max(deepest, depthOf(item, stopAbove, depth + 1));
    if (deepest > stopAbove) break;
  }
  return deepest;
}

/** A call that aborts its signal when the client cancels it or its deadline passes. */
function signalOf(call: Call): AbortSignal {
  const controller = new AbortController();
  if (call.cancelled) controller.abort();
  else call.once("cancelled", () => controller.abort());
  return controller.signal;
}

/** Runs one call through the request steps and its operation; throws the gRPC status of a failure. */
async function answer<S extends FramedEventSink>(
  context: GatewayContext,
  method: GrpcMethod,
  call: Call,
  sinkOf: (clientId: string) => S,
): Promise<Answer<S>> {
  const headers = headersOf(call);
  const signal = signalOf(call);
  let name = "";
  let profileError: unknown;
  try {
    name = profileName(context, method, headers, call.request);
  } catch (error) {
    profileError = error;
  }
  const account = new RequestAccount(context, name, "grpc");
  account.method = method.name;
  // Every Redis wait of the request is bounded: a paused Redis gets UNAVAILABLE STORE_TIMEOUT, not a hanging call.
  const deadline = new StoreDeadline(signal);
  try {
    if (profileError !== undefined) throw profileError;
    const profile = profileNamed(context, name);
    const head: RequestHead = { headers, url: `grpc:${method.path}` };
    const client = await admitRequest(context, profile, head, deadline, account);
    const { maxBodyBytes, maxJsonDepth } = context.config.server;
    if (call.request.byteLength > maxBodyBytes) throw new PayloadTooLargeError(maxBodyBytes);
    const fields = decodeRequest(method, call.request);
    if (depthOf(fields, maxJsonDepth) > maxJsonDepth) throw new NestingTooDeepError(maxJsonDepth);
    const params = checkedParams(method.name, fields);
    account.params = params;
    return await runOperation({ context, profile, client, account, deadline, method: method.name, params }, sinkOf);
  } catch (error) {
    throw grpcError(account.failed(error));
  } finally {
    deadline.clear();
  }
}

function unary(context: GatewayContext, method: GrpcMethod) {
  return (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
    const noStream = (): never => {
      throw new Error(`${method.name} is unary`);
    };
    answer(context, method, call, noStream).then(
      (done) => {
        const result = "result" in done ? done.result : undefined;
        callback(null, Buffer.from(encodeMessage(method.output, result)));
      },
      (status) => callback(status),
    );
  };
}

function serverStreaming(context: GatewayContext, method: GrpcMethod) {
  const framing: SseFraming = grpcFraming(method);
  const bufferMaxBytes = context.config.server.streamBufferMaxBytes;
  return (call: ServerWritableStream<Buffer, Buffer>): void => {
    const sinkOf = (clientId: string) =>
      new FramedEventSink(context, framing, new GrpcStream(call, bufferMaxBytes), clientId);
    answer(context, method, call, sinkOf).catch((status) => call.emit("error", status));
  };
}

const identity = (bytes: Buffer): Buffer => bytes;

/**
 * The service as @grpc/grpc-js takes it. Requests arrive as bytes and are decoded only after the request steps have
 * admitted the client; responses leave as the bytes the binding encoded.
 */
export function grpcService(context: GatewayContext): {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
} {
  const definition: Record<string, ServiceDefinition[string]> = {};
  const implementation: UntypedServiceImplementation = {};
  for (const method of GRPC_METHODS) {
    definition[method.name] = {
      path: method.path,
      requestStream: false,
      responseStream: method.serverStreaming,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    implementation[method.name] = method.serverStreaming ? serverStreaming(context, method) : unary(context, method);
  }
  return { definition, implementation };
}
