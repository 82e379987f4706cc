/**
 * `@tender/adapters/testing`: the contracts a storage or provider adapter must pass, as test suites
 * a team calls over its own adapter (docs/packaging.md, "Proving your own adapter"). They register
 * vitest tests (through @effect/vitest), so this entry needs vitest and @effect/vitest installed,
 * the package's optional peers; the main entry (`@tender/adapters`) never imports it.
 */
export {
  channelsContract,
  clientSecretsContract,
  coreStorageContract,
  customersContract,
  newAccount,
  newChannel,
  newDelivery,
  newEndpoint,
  newOrder,
  newSession,
  newTransaction,
  pastBoundContract,
  retentionContract,
  storageContract,
  type StorageContractOptions,
  type StorageContractServices,
  type StorageServices,
  storedEvent,
  transfersContract
} from "./StorageContract.ts"
export {
  channelHealthContract,
  routingContract,
  type RoutingContractOptions,
  type RoutingContractServices,
  routingRulesContract
} from "./RoutingContract.ts"
export { consoleReadsContract, type ConsoleReadsContractOptions } from "./ConsoleReadsContract.ts"
export { providerContract, type ProviderContractCards, type ProviderContractOptions } from "./ProviderContract.ts"
