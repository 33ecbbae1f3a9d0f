// A loopback OTLP/HTTP traces receiver: a Bun.serve that decodes the JSON export requests the OpenTelemetry exporter
// sends to /v1/traces and keeps every span with its attributes as plain values.
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** The exporting process's service.name. */
  service: unknown;
  /** 2 = error. */
  status: number;
}

export interface OtlpReceiver {
  readonly url: string;
  /** Every span received, unless started with `keep: false`. */
  readonly spans: ReceivedSpan[];
  /** How many spans were received. */
  readonly count: number;
  /** Export requests that were not OTLP/JSON (they would fail the test). */
  readonly refused: string[];
  stop(): void;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

function plain(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function record(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        status?: { code?: number };
      }[];
    }[];
  }[];
}

/** Starts the receiver; `keep: false` only counts the spans (a benchmark's sink). */
export function startOtlpReceiver(options: { keep?: boolean } = {}): OtlpReceiver {
  const keep = options.keep ?? true;
  let count = 0;
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const type = request.headers.get("content-type") ?? "";
      if (new URL(request.url).pathname !== "/v1/traces" || !type.includes("json")) {
        refused.push(`${request.method} ${request.url} ${type}`);
        return new Response("not OTLP/JSON traces", { status: 415 });
      }
      const body = (await request.json()) as ExportRequest;
      for (const resource of body.resourceSpans ?? []) {
        const service = record(resource.resource?.attributes)["service.name"];
        for (const scope of resource.scopeSpans ?? []) {
          count += scope.spans?.length ?? 0;
          if (!keep) continue;
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: record(span.attributes),
              service,
              status: span.status?.code ?? 0,
            });
          }
        }
      }
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1/traces`,
    spans,
    get count() {
      return count;
    },
    refused,
    stop: () => server.stop(true),
  };
}
