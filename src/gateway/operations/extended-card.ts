// GetExtendedAgentCard: the profile's extended card, for an authenticated client that may use the profile (the
// binding has checked both); -32004 when the profile has none (its public card says capabilities.extendedAgentCard
// false).
import { UnsupportedOperationError } from "../../protocol/index.ts";
import type { OperationCall } from "./operation-call.ts";

export async function getExtendedAgentCard(call: OperationCall<"GetExtendedAgentCard">): Promise<unknown> {
  const card = call.context.cards.extended(call.profile.profile);
  if (card === undefined) {
    throw new UnsupportedOperationError(
      "This agent has no extended agent card (capabilities.extendedAgentCard is false)",
    );
  }
  return card;
}
