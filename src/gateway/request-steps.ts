// The steps every binding runs once per request, before it reads a body: the profile the path names, the client the
// headers authenticate (no body is read for a request without a valid key), its permission on the profile, the
// A2A-Version it asks for; after it, the params check of the method; and, once the request is answered, its metrics
// and log line.
import type { Span } from "@opentelemetry/api";
import { clientRequestBurst } from "../config/index.ts";
import { type ClientRecord, storeFailure } from "../journal/index.ts";
import {
  type A2aMethod,
  type A2aParams,
  checkParams,
  type DescribedError,
  describeError,
  EndpointNotFoundError,
  InvalidParamsError,
  RateLimitedError,
  VersionNotSupportedError,
  type Violation,
} from "../protocol/index.ts";
import { PROTOCOL_VERSION } from "./agent-card.ts";
import type { GatewayContext, ProfileRuntime } from "./gateway-context.ts";
import { type BindingName, recordRequest, taskIdOf } from "./request-log.ts";
import { endRequestSpan, startRequestSpan } from "./request-span.ts";
import type { StoreDeadline } from "./store-deadline.ts";

/** What the request steps read of a request: its headers (gRPC metadata, for the gRPC binding) and its URL. */
export type RequestHead = Pick<Request, "headers" | "url">;

/** The A2A versions a binding may serve, as `A2A-Version` spells them (Major.Minor). */
export type ServedVersion = "1.0" | "0.3";
/** The versions the 1.0 interfaces serve: Major.Minor, with any patch number ignored. */
export const SERVED_VERSIONS = [PROTOCOL_VERSION] as const satisfies readonly ServedVersion[];
const KNOWN_VERSION = /^(1\.0|0\.3)(\.\d+)?$/;

/**
 * The version a request asks for in `A2A-Version` (header, or the query parameter of that name), patch number
 * ignored; an absent or empty one is 0.3, as the specification reads it. Throws -32009 unless it is one of `served`.
 */
export function requestedVersion(request: RequestHead, served: readonly ServedVersion[]): ServedVersion {
  const header = request.headers.get("a2a-version") ?? new URL(request.url).searchParams.get("A2A-Version") ?? "";
  const requested = header.trim();
  const version = requested === "" ? "0.3" : (KNOWN_VERSION.exec(requested)?.[1] as ServedVersion | undefined);
  if (version === undefined || !served.includes(version)) throw new VersionNotSupportedError(requested, served);
  return version;
}

/** Reads `A2A-Version`; throws -32009 unless it is 1.0. */
export function checkVersion(request: RequestHead): void {
  requestedVersion(request, SERVED_VERSIONS);
}

/** The profile a path names; EndpointNotFoundError (404) for a name no profile has. */
export function profileOf(context: GatewayContext, name: string, request: Request): ProfileRuntime {
  const profile = context.profiles.get(name);
  if (!profile) throw new EndpointNotFoundError(new URL(request.url).pathname);
  return profile;
}

/** The requests per second a client may make (its record's own value, else clients.requestsPerSecond); 0 = no limit. */
export function clientRate(context: GatewayContext, client: ClientRecord): number {
  return client.requestsPerSecond ?? context.config.clients.requestsPerSecond;
}

/**
 * Authenticates the request from its headers alone (its Redis lookup bounded by the store deadline), checks the
 * client's permission on the profile and takes the request from the client's rate: 401, 403 or 429 before a byte of
 * the body is read.
 */
export async function admit(
  context: GatewayContext,
  profile: ProfileRuntime,
  request: RequestHead,
  deadline: StoreDeadline,
): Promise<ClientRecord> {
  const client = await deadline.bound(context.auth.authenticate(request.headers));
  context.auth.authorize(client, profile.profile.name);
  const perSecond = clientRate(context, client);
  if (perSecond > 0) {
    const burst = clientRequestBurst(context.config, perSecond);
    const waitMs = await deadline.bound(context.rateLimits.take(client.id, perSecond, burst).catch(storeFailure));
    if (waitMs > 0) throw new RateLimitedError(perSecond, Math.ceil(waitMs / 1000));
  }
  return client;
}

/**
 * Every binding's steps between the path and the body: arms the store deadline, admits the client (401, 403, 429) and
 * checks A2A-Version. Nothing of the body has been read.
 */
export async function admitRequest(
  context: GatewayContext,
  profile: ProfileRuntime,
  request: RequestHead,
  deadline: StoreDeadline,
  account: RequestAccount,
  served: readonly ServedVersion[] = SERVED_VERSIONS,
): Promise<ClientRecord> {
  account.traceFrom(request.headers);
  const seconds = context.config.server.storeTimeoutSeconds;
  deadline.arm(seconds * 1000, seconds);
  const client = await admit(context, profile, request, deadline);
  account.clientId = client.id;
  account.version = requestedVersion(request, served);
  return client;
}

/** ": <first violation>", for an error message. */
export function summary(violations: readonly Violation[]): string {
  const first = violations[0];
  if (!first) return "";
  return `: ${first.field === "" ? "" : `${first.field}: `}${first.description}`;
}

/** The params of `method` once they pass its schema; else InvalidParamsError (-32602, with a BadRequest). */
export function checkedParams<M extends A2aMethod>(method: M, value: unknown): A2aParams[M] {
  const checked = checkParams(method, value);
  if (!checked.ok) throw new InvalidParamsError(`Invalid params${summary(checked.violations)}`, checked.violations);
  return checked.value;
}

/** One request's account: filled in as the request is read, recorded once when it is answered. */
export class RequestAccount {
  method = "";
  clientId: string | undefined;
  params: unknown;
  /** The A2A version the request asked for, once read. */
  version: string | undefined;
  readonly startedAt = performance.now();
  /** The call's SERVER span (tracing on, from the first shared step); ended when the request is answered. */
  span: Span | undefined;

  constructor(
    private readonly context: GatewayContext,
    readonly profile: string,
    readonly binding: BindingName,
  ) {}

  /** Starts the call's SERVER span under the caller's `traceparent` (nothing when tracing is off). */
  traceFrom(headers: Headers): void {
    this.span ??= startRequestSpan(headers, this.startedAt, this.binding, this.profile);
  }

  /** Records the answer: `code` is 0 on success, else the error's JSON-RPC code (the error table's neutral code). */
  answered(code: number, error: unknown, result?: unknown, errorType?: string): void {
    if (this.span !== undefined) {
      const { method, version, params } = this;
      endRequestSpan(this.span, { method, version, params, result, errorType });
      this.span = undefined;
    }
    recordRequest(this.context, {
      binding: this.binding,
      method: this.method,
      profile: this.profile,
      clientId: this.clientId,
      taskId: taskIdOf(this.params, result),
      code,
      error,
      errorType,
      startedAt: this.startedAt,
    });
  }

  /** Records a failed request (logging an error no client was meant to see) and describes it for the binding's answer. */
  failed(error: unknown): DescribedError {
    const described = describeError(error);
    if (described.unexpected) {
      const { method, profile, binding } = this;
      this.context.logger.error({ err: error, binding, method, profile }, "request failed");
    }
    this.answered(
      described.row.jsonRpcCode,
      error,
      undefined,
      described.unexpected ? "_OTHER" : described.row.type.name,
    );
    return described;
  }
}
