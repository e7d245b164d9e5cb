import type { Client } from './client';

/**
 * A whole client session written against the generated types only, without a cast: `tsc` proves the
 * document describes enough for a client to be written against it (npm run openapi:client-check), and
 * test/e2e/openapi-contract.e2e-spec.ts runs it against the service.
 *
 * `connect` makes a client with the given credentials (the security headers of the document).
 */
export async function scenario(connect: (credentials: Record<string, string>) => Client, token: string, organizationId: string) {
  const member = connect({ Authorization: `Token ${token}`, 'X-Organization': organizationId });

  // A twin, then the list (dasherized names) and the detail (underscored names) of it.
  const created = await member('post', '/my/twins', {
    body: {
      data: {
        type: 'twins',
        attributes: {
          name: 'Scenario twin',
          public: true,
          location: { type: 'Point', coordinates: [2.3522, 48.8566] },
          personality: { characteristics: ['coffee'], services: ['tastings'] },
          'meta-data': { source: 'scenario' },
          'phone-number': '+33 1 00 00 00 00',
        },
      },
    },
  });
  if (created.status !== 201) throw new Error(`create twin: ${created.status}`);
  const twinId: string = created.body.data.id;
  const phone: string = created.body.data.attributes.phone_number;

  const listed = await member('get', '/twins', { query: { organization: organizationId, is_supplier: true, page_size: 10 } });
  const listedPhones: string[] = listed.body.data.map((twin) => twin.attributes['phone-number']);
  // Numbered pages carry the count; keyset pages (page_after/page_before) have no meta.
  const pages: number = listed.body.meta?.pagination.pages ?? 0;

  const detail = await member('get', '/twins/{id}', { path: { id: twinId } });
  const suppliedTasks: number = detail.body.data.attributes.tasks_supplied;
  const openingHours: string[] = detail.body.data.attributes.opening_hours;

  // The timeline of that twin: an event, a change of it, the list.
  const asTwin = connect({ Authorization: `Token ${token}`, 'X-Organization': organizationId, 'X-Twin': twinId });
  const event = await asTwin('post', '/events', {
    headers: { 'Idempotency-Key': `scenario-${twinId}` },
    body: { data: { type: 'events', attributes: { name: 'walk', category: 'activity', data: { steps: 4200, device: 'watch' } } } },
  });
  const eventId: string = event.body.data.id;
  const patched = await asTwin('patch', '/events/{id}', {
    path: { id: eventId },
    body: { data: { type: 'events', id: eventId, attributes: { category: 'sport', data: { steps: 5000, device: null } } } },
  });
  const category: string = patched.body.data.attributes.category;
  const timeline = await asTwin('get', '/events', { query: { category: 'sport', page_size: 5 } });
  const timestamps: string[] = timeline.body.data.map((item) => item.attributes.timestamp);

  // A quest of that twin, the twin's quests, its revenue.
  const quest = await asTwin('post', '/quests', {
    body: { data: { type: 'quests', attributes: { name: 'Scenario quest', summary: 'Two stops.', price: '1.50' } } },
  });
  const questId: string = quest.body.data.id;
  const published: boolean = quest.body.data.attributes.public;
  const mine = await asTwin('get', '/my/quests', { query: { is_original: true } });
  const prices: number[] = mine.body.data.map((item) => item.attributes.price);
  const revenue = await asTwin('get', '/my/quests/total_revenue', {});
  const total: number = revenue.body.revenue;

  // And the event goes (a 204: no body).
  const removed = await asTwin('delete', '/events/{id}', { path: { id: eventId } });
  const noBody: undefined = removed.body;

  return { twinId, phone, listedPhones, pages, suppliedTasks, openingHours, eventId, category, timestamps, questId, published, prices, total, deleted: removed.status === 204 && noBody === undefined };
}
