/**
 * The store the app uses, with every call of the Store interface timed: one
 * explicit wrapper, so a method added to the interface does not compile until it
 * is listed here. close and migrate are not timed (start-up and shutdown, not
 * traffic).
 */
import type { Store } from '../store/types.js';

/** Wraps one store call; `operation` names it in the metrics. */
export type Timer = <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) => (...args: A) => Promise<R>;

export function timedStore(store: Store, time: Timer): Store {
  const { plants, tokens, webhooks } = store;
  return {
    kind: store.kind,
    plants: {
      createPlant: time('plants.createPlant', (plant) => plants.createPlant(plant)),
      getPlant: time('plants.getPlant', (id) => plants.getPlant(id)),
      listPlants: time('plants.listPlants', (query) => plants.listPlants(query)),
      listPlantsPage: time('plants.listPlantsPage', (query) => plants.listPlantsPage(query)),
      deletePlant: time('plants.deletePlant', (id) => plants.deletePlant(id)),
    },
    tokens: {
      insertToken: time('tokens.insertToken', (token) => tokens.insertToken(token)),
      findTokenBySecretHash: time('tokens.findTokenBySecretHash', (secretHash) => tokens.findTokenBySecretHash(secretHash)),
      listTokens: time('tokens.listTokens', () => tokens.listTokens()),
      revokeToken: time('tokens.revokeToken', (idOrName, at) => tokens.revokeToken(idOrName, at)),
      recordTokenUse: time('tokens.recordTokenUse', (id, at) => tokens.recordTokenUse(id, at)),
      countTokens: time('tokens.countTokens', () => tokens.countTokens()),
    },
    webhooks: {
      insertSubscription: time('webhooks.insertSubscription', (subscription) => webhooks.insertSubscription(subscription)),
      listSubscriptions: time('webhooks.listSubscriptions', () => webhooks.listSubscriptions()),
      getSubscription: time('webhooks.getSubscription', (id) => webhooks.getSubscription(id)),
      rotateSecret: time('webhooks.rotateSecret', (id, secret, expiresAt) => webhooks.rotateSecret(id, secret, expiresAt)),
      deleteSubscription: time('webhooks.deleteSubscription', (id) => webhooks.deleteSubscription(id)),
      listDeliveries: time('webhooks.listDeliveries', (subscriptionId, query) => webhooks.listDeliveries(subscriptionId, query)),
      getDelivery: time('webhooks.getDelivery', (subscriptionId, deliveryId) => webhooks.getDelivery(subscriptionId, deliveryId)),
      hasDueDeliveries: time('webhooks.hasDueDeliveries', (now) => webhooks.hasDueDeliveries(now)),
      backlog: time('webhooks.backlog', (now) => webhooks.backlog(now)),
      claimDueDeliveries: time('webhooks.claimDueDeliveries', (request) => webhooks.claimDueDeliveries(request)),
      recordAttempt: time('webhooks.recordAttempt', (result) => webhooks.recordAttempt(result)),
      retryDelivery: time('webhooks.retryDelivery', (subscriptionId, deliveryId, now) => webhooks.retryDelivery(subscriptionId, deliveryId, now)),
      pruneFinishedEvents: time('webhooks.pruneFinishedEvents', (before, limit) => webhooks.pruneFinishedEvents(before, limit)),
    },
    migrate: () => store.migrate(),
    ping: time('store.ping', () => store.ping()),
    close: () => store.close(),
  };
}
