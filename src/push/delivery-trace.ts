// The span of one webhook attempt: a CLIENT span in the trace of the request that started the task's run (the carrier
// kept on the run), whose `traceparent` the webhook carries. With tracing off nothing is read and nothing is added.
import { SpanKind } from "@opentelemetry/api";
import type { PushOutbox } from "../journal/index.ts";
import { attributes as A, contextFromCarrier, injectHeaders, inSpan, tracing } from "../tracing/index.ts";
import type { Delivery, DeliveryOutcome } from "./deliver.ts";

/** Runs one attempt of `delivery` for a task in its span; `attempt` gets the delivery with its trace headers. */
export async function traceDelivery(
  outbox: PushOutbox,
  target: { shard: number; taskId: string; configId: string },
  delivery: Delivery,
  attempt: (delivery: Delivery) => Promise<DeliveryOutcome>,
): Promise<DeliveryOutcome> {
  if (!tracing()) return await attempt(delivery);
  const carrier = await outbox.runTrace(target.shard, target.taskId).catch(() => null);
  const options = {
    kind: SpanKind.CLIENT,
    attributes: {
      [A.ATTR_A2A_TASK_ID]: target.taskId,
      [A.ATTR_A2A_PUSH_CONFIG_ID]: target.configId,
      [A.ATTR_HTTP_REQUEST_METHOD]: "POST",
      [A.ATTR_SERVER_ADDRESS]: hostOf(delivery.url),
    },
  };
  return await inSpan(
    "a2a.push",
    options,
    async (span) => {
      const traceHeaders: Record<string, string> = {};
      injectHeaders(span, traceHeaders);
      const outcome = await attempt({ ...delivery, traceHeaders });
      span.setAttribute(A.ATTR_A2A_PUSH_OUTCOME, outcome.kind);
      if ("status" in outcome && outcome.status !== undefined) {
        span.setAttribute(A.ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
      }
      return outcome;
    },
    contextFromCarrier(carrier),
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
