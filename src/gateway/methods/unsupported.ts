// The methods this gateway does not serve yet, answered as the capabilities in the card say: push notification
// configs (-32003) and the extended card (-32004, extendedAgentCard is false).
import { PushNotificationNotSupportedError, UnsupportedOperationError } from "../../journal/index.ts";

export async function pushUnsupported(): Promise<never> {
  throw new PushNotificationNotSupportedError();
}

export async function extendedCardUnsupported(): Promise<never> {
  throw new UnsupportedOperationError(
    "This agent has no extended agent card (capabilities.extendedAgentCard is false)",
  );
}
