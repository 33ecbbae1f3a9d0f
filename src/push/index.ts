// The push area: webhook delivery for workers (address policy, signatures, one attempt, retry timing, the worker
// that drains the outbox).
// Only worker processes import this; the gateway never does. It imports the journal (and config and logger types).

export { addressKind, type ParsedIp, parseIp } from "../journal/index.ts";
export {
  type AddressPolicy,
  checkUrlForm,
  checkWebhookUrl,
  isAllowListed,
  type UrlCheck,
  type UrlForm,
  type UrlRefusal,
} from "./address-policy.ts";
export {
  type DeliverDeps,
  type Delivery,
  type DeliveryOutcome,
  deliverOnce,
  NOTIFICATION_TOKEN_HEADER,
  WEBHOOK_CONTENT_TYPE,
} from "./deliver.ts";
export {
  type Connector,
  type ConnectRequest,
  type ConnectResponse,
  createHttpConnector,
  type HttpConnectorOptions,
  WebhookTimeoutError,
} from "./http-connector.ts";
export { type PushCounters, PushWorker, type PushWorkerDeps } from "./push-worker.ts";
export { type ResolvedAddress, type Resolver, systemResolver } from "./resolver.ts";
export {
  type BackoffOptions,
  classifyStatus,
  honoursRetryAfter,
  nextDelayMs,
  parseRetryAfter,
  type StatusClass,
} from "./retry-policy.ts";
export { type SettlementRules, settlementFor } from "./settlement.ts";
export {
  DEFAULT_TOLERANCE_SECONDS,
  type HeaderSource,
  InvalidSigningSecretError,
  signingKey,
  signWebhook,
  verifyWebhook,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookHeaders,
  type WebhookVerification,
} from "./signature.ts";
