// The method this gateway does not serve, answered as the card's capabilities say: the extended card (-32004,
// extendedAgentCard is false).
import { UnsupportedOperationError } from "../../protocol/index.ts";

export async function extendedCardUnsupported(): Promise<never> {
  throw new UnsupportedOperationError(
    "This agent has no extended agent card (capabilities.extendedAgentCard is false)",
  );
}
