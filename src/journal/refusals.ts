// The refusals the capacity checks of the accept, resume and push-config scripts answer with, as the errors a client
// sees: one row per refusal, each naming the limit that was reached. Every one of them stored nothing.
import {
  type A2aError,
  CapacityError,
  REFUSAL_REASONS,
  UnauthenticatedError,
  WorkerUnavailableError,
} from "../protocol/index.ts";

export type Refusal =
  | "worker"
  | "clientTasks"
  | "profileQuota"
  | "unknownClient"
  | "interruptedTasks"
  | "clientStorage"
  | "profileStorage";

export interface RefusalContext {
  clientId: string;
  profile: string;
  retryAfterSeconds: number;
}

/** The error a client gets for a refusal. */
export function refusalError(refusal: Refusal, context: RefusalContext): A2aError {
  const { clientId, profile, retryAfterSeconds: retry } = context;
  switch (refusal) {
    case "worker":
      return new WorkerUnavailableError(retry);
    case "clientTasks":
      return new CapacityError(
        REFUSAL_REASONS.clientTaskLimit,
        "This client has as many queued and running tasks as its limit allows",
        retry,
        { clientId },
      );
    case "profileQuota":
      return new CapacityError(
        REFUSAL_REASONS.profileQuota,
        `Profile ${profile} has as many queued and running tasks as its quota allows`,
        retry,
        { profile },
      );
    case "unknownClient":
      return new UnauthenticatedError("This client is unknown or revoked");
    case "interruptedTasks":
      return new CapacityError(
        REFUSAL_REASONS.interruptedTasks,
        "This client has as many tasks waiting for input as its limit of interrupted tasks allows " +
          "(clients.maxInterruptedTasks); answer or cancel one of them; nothing was stored",
        retry,
        { clientId },
      );
    case "clientStorage":
      return new CapacityError(
        REFUSAL_REASONS.clientStorage,
        "This client's tasks hold as many bytes as its storage limit allows (clients.maxStoredBytes); finished " +
          "tasks give their bytes back when they are deleted after their retention; nothing was stored",
        retry,
        { clientId },
      );
    case "profileStorage":
      return new CapacityError(
        REFUSAL_REASONS.profileStorage,
        `The tasks of profile ${profile} hold as many bytes as its storage quota allows (quota.maxStoredBytes); ` +
          "nothing was stored",
        retry,
        { profile },
      );
  }
}
