import type { LightMyRequestResponse } from 'fastify';
import { document, JSON_API, TestApp, TestTenant } from './test-app';

export interface QuestData {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  relationships: Record<string, { data: unknown; meta?: Record<string, unknown> }>;
}

/** Attributes of a quest's full form (docs/API.md, section 12). */
export const FULL_QUEST_ATTRIBUTES = [
  'created',
  'modified',
  'name',
  'summary',
  'description',
  'summary-image-url',
  'public',
  'price',
  'twin-metadata',
  'original-twin-metadata',
  'task-count',
].sort();

/** Attributes of the creation answer (docs/API.md, section 12). */
export const CREATED_QUEST_ATTRIBUTES = ['created', 'modified', 'name', 'description', 'summary', 'public'].sort();

/** Quest, task, image and twin requests of one test file, acting as a tenant's twins. */
export class QuestClient {
  constructor(readonly service: TestApp) {}

  /** Another twin in the tenant's organization (public/supplier as asked). */
  async twin(tenant: TestTenant, options: { name?: string; description?: string; public?: boolean; supplier?: boolean } = {}): Promise<string> {
    const rows: { id: string }[] = await this.service.dataSource.query(
      `INSERT INTO twins (organization_id, owner_account_id, name, description, public, services) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
      [tenant.organizationId, tenant.accountId, options.name ?? 'Another twin', options.description ?? '', options.public ?? false, options.supplier ? ['coffee'] : []],
    );
    return rows[0].id;
  }

  async setTwinPublic(twinId: string, value: boolean): Promise<void> {
    await this.service.dataSource.query(`UPDATE twins SET public = $2 WHERE id = $1`, [twinId, value]);
  }

  send(tenant: TestTenant, method: 'GET' | 'POST' | 'PATCH', url: string, data?: Record<string, unknown>, twin: string | boolean = true): Promise<LightMyRequestResponse> {
    return this.service.inject({
      method,
      url,
      headers: { ...tenant.headers({ twin }), ...(data ? { 'content-type': JSON_API } : {}) },
      ...(data ? { payload: document(data) } : {}),
    });
  }

  async create(tenant: TestTenant, attributes: Record<string, unknown>, twin: string | boolean = true): Promise<QuestData> {
    const response = await this.send(tenant, 'POST', '/quests/', { type: 'quests', attributes }, twin);
    if (response.statusCode !== 201) throw new Error(`create quest failed: ${response.statusCode} ${response.body}`);
    return response.json().data;
  }

  async patch(tenant: TestTenant, id: string, attributes: Record<string, unknown>, twin: string | boolean = true): Promise<LightMyRequestResponse> {
    return this.send(tenant, 'PATCH', `/quests/${id}/`, { type: 'quests', id, attributes }, twin);
  }

  /** A public quest, created and published by the tenant's twin (or the given one). */
  async published(tenant: TestTenant, attributes: Record<string, unknown>, twin: string | boolean = true): Promise<QuestData> {
    const quest = await this.create(tenant, attributes, twin);
    const response = await this.patch(tenant, quest.id, { public: true }, twin);
    if (response.statusCode !== 200) throw new Error(`publish failed: ${response.statusCode} ${response.body}`);
    return response.json().data;
  }

  embark(tenant: TestTenant, id: string, twin: string | boolean = true): Promise<LightMyRequestResponse> {
    return this.send(tenant, 'POST', `/quests/${id}/embark/`, undefined, twin);
  }

  addTask(tenant: TestTenant, questId: string, attributes: Record<string, unknown>, place?: string, twin: string | boolean = true): Promise<LightMyRequestResponse> {
    return this.send(
      tenant,
      'POST',
      `/quests/${questId}/tasks/`,
      { type: 'tasks', attributes, ...(place ? { relationships: { place: { data: { type: 'twins', id: place } } } } : {}) },
      twin,
    );
  }

  async upload(tenant: TestTenant, contentType: string, bytes: Buffer): Promise<LightMyRequestResponse> {
    return this.service.inject({ method: 'POST', url: '/images/', headers: { ...tenant.headers(), 'content-type': contentType }, payload: bytes });
  }

  async image(tenant: TestTenant, contentType: string, bytes: Buffer): Promise<{ id: string; attributes: Record<string, unknown> }> {
    const response = await this.upload(tenant, contentType, bytes);
    if (response.statusCode !== 201) throw new Error(`upload failed: ${response.statusCode} ${response.body}`);
    return response.json().data;
  }

  async tasksSupplied(twinId: string): Promise<number> {
    const rows: { tasks_supplied: number }[] = await this.service.dataSource.query(`SELECT tasks_supplied FROM twins WHERE id = $1`, [twinId]);
    return rows[0].tasks_supplied;
  }
}
