// Inbound triggers: POST /v1/triggers/<monitor> with an API key publishes the
// JSON body as an observation on that monitor (type from the body, default
// ai.vigil.trigger; the rest of the body is the observation's data), so a
// sentinel recipe on the monitor runs with the body's `vars`. The API key,
// issued by the server's administrator, may trigger the monitors of its scope
// only; the observation names the key (actor `apikey:<id>`, origin webhook),
// never the owner. A monitor outside the scope answers as a missing one, so
// a key cannot tell which monitors exist.
import { invalid, notFound, ProtocolError } from '../protocol/errors.ts';
import { validate } from '../protocol/validate.ts';
import { draftOf, type PublishedObservation } from '../service/monitor-operations.ts';
import type { MonitorService } from '../service/service.ts';
import { mayTrigger } from './api-keys.ts';
import type { ApiKeyTable } from './cloud-store.ts';

export const triggerType = 'ai.vigil.trigger';

export async function fireTrigger(
  service: MonitorService,
  key: ApiKeyTable,
  monitor: string,
  body: unknown,
): Promise<{ monitor: string; seq: number; type: string }> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The trigger body must be a JSON object, e.g. {"vars": {"NAME": "value"}}.');
  }
  const { type = triggerType, subject = null, ...data } = body as Record<string, unknown>;
  if (data.vars !== undefined && (typeof data.vars !== 'object' || data.vars === null || Array.isArray(data.vars))) {
    throw invalid('"vars" must be an object of variable names to values.', { field: 'vars' });
  }
  const item = validate<PublishedObservation>('observation', { type, subject, data, actor: `apikey:${key.id}`, origin: 'webhook' });
  const publish = () => publishTrigger(service, key, monitor, item);
  // On a cluster the publish runs as every publish does: on the monitor's fresh state, again after a lost race.
  return service.cluster ? service.cluster.run('monitors/publish', { id: monitor }, publish) : publish();
}

async function publishTrigger(
  service: MonitorService,
  key: ApiKeyTable,
  monitor: string,
  item: PublishedObservation,
): Promise<{ monitor: string; seq: number; type: string }> {
  const feed = mayTrigger(key, monitor) ? service.feed(monitor) : undefined;
  if (!feed) throw notFound(`No monitor "${monitor}" on this server.`);
  if (feed.status !== 'active') {
    throw new ProtocolError('UNAVAILABLE', `Monitor "${monitor}" is ${feed.status} and accepts no publications.`, { live: false, status: feed.status });
  }
  const draft = draftOf(feed, item, null, service.now());
  draft.tags = { ...draft.tags, 'vigil.api_key': key.id };
  const { seq } = service.observations.append(feed, draft, 'producer');
  await service.settle();
  return { monitor, seq, type: item.type };
}
