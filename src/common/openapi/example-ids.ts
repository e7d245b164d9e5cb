/**
 * The ids the document's examples use, one per resource type. test/e2e/openapi-contract.e2e-spec.ts
 * sends every request example with these replaced by real ids of the same type, so keep to them.
 */
export const EXAMPLE_IDS = {
  organizations: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  accounts: '6a1696d8-1f0b-4c2e-9a57-3d4e5f6a7b8c',
  tokens: '75d9f1f4-2b3c-4d5e-8f70-8192a3b4c5d6',
  twins: '0f8fad5b-d9cb-469f-a165-70867728950e',
  images: '0b6f0d3e-3c1b-4c69-9d55-5a0a4f1f7b21',
  quests: '6f1c2a7e-2d0b-4f3e-9a51-0c8d7e4b9f10',
  tasks: '9a8b7c6d-5e4f-4a3b-8c1d-0e9f8a7b6c5d',
  events: '0199a6f4-3c2e-7a41-8b1d-5f0e2c9d7a10',
  webhooks: '4b3f1d2e-8a6c-4e5f-9b0a-1c2d3e4f5a60',
  geofences: '8d2e4f6a-1b3c-4d5e-8f7a-9b0c1d2e3f4a',
} as const;

/** Other ids of examples (a second twin, a copy of a quest, a personality), never sent by the contract test. */
export const OTHER_EXAMPLE_IDS = {
  twin: '3d9b8c1a-5e4f-4a2b-8c7d-1e0f2a3b4c5d',
  quest: '1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b',
  personality: 'a3bb189e-8bf9-4888-9912-ace4e6543002',
} as const;

/**
 * The id a client chose for a resource it creates (offline apps), in create examples: the contract test
 * sends a new UUID in its place each time, since a second create under one id is a 409.
 */
export const CLIENT_CHOSEN_EXAMPLE_ID = '5f0c7a52-8d1e-4c3b-9a57-2b6f3e1d9c40';

/** The host of the examples' absolute URLs. */
export const EXAMPLE_BASE_URL = 'https://api.example.com';
