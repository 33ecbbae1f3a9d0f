// Registers this process's tracer provider when `tracing.enabled`: W3C Trace Context propagation, an async-hooks
// context manager, a parent-based ratio sampler, and a batch exporter over OTLP/HTTP. Off, it loads none of the SDK and
// registers nothing, so every span is the API's no-op.
import { context, propagation, trace } from "@opentelemetry/api";
import packageJson from "../../package.json" with { type: "json" };
import type { TracingConfig } from "../config/index.ts";
import { setTracing } from "./tracer.ts";

export interface TracingHandle {
  readonly enabled: boolean;
  /** Exports every ended span now (a process that is about to exit). */
  flush(): Promise<void>;
  /** Flushes and unregisters the provider; later spans are no-ops. */
  shutdown(): Promise<void>;
}

const OFF: TracingHandle = { enabled: false, flush: async () => {}, shutdown: async () => {} };

/** One provider per process: a second start (two gateways in one test process) shares the first. */
let started: Promise<TracingHandle> | undefined;

async function register(config: TracingConfig): Promise<TracingHandle> {
  const [
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
    sdk,
    { OTLPTraceExporter },
    resources,
    { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION },
  ] = await Promise.all([
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/core"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
  ]);
  // Without a url the exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT itself.
  const exporter = new OTLPTraceExporter(config.endpoint === "" ? {} : { url: config.endpoint });
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: packageJson.version,
    }),
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(config.samplingRatio) }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracing(true);
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    async shutdown() {
      if (started === undefined) return;
      started = undefined;
      setTracing(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** Starts tracing for this process when the config enables it; the handle is a no-op otherwise. */
export function startTracing(config: TracingConfig): Promise<TracingHandle> {
  if (!config.enabled) return Promise.resolve(OFF);
  started ??= register(config);
  return started;
}
