import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerProblem, bytes, missingResponses, noBody, serializerCompiler } from '../../src/http/responses.ts';
import { success } from '../../src/api/envelope.ts';

// The check every HTTP test runs on every JSON answer (CHECK_RESPONSES), and the serializer that
// keeps internal fields from leaving (docs/architecture.md, "One definition of the API").

const record = z.object({ id: z.string(), size: z.number() });
const response = { 200: success(z.object({ item: record })), 204: noBody('Deleted'), 206: bytes('Part of the bytes') };
const json = 'application/json; charset=utf-8';

describe('answerProblem', () => {
  it('accepts an answer that matches the schema of its status', () => {
    expect(answerProblem(response, 200, json, JSON.stringify({ success: true, data: { item: { id: 'a', size: 1 } } }), 'ApiError')).toBeNull();
  });

  it('names the field of an answer that breaks its schema', () => {
    const problem = answerProblem(response, 200, json, JSON.stringify({ success: true, data: { item: { id: 'a', size: '1' } } }), 'ApiError');
    expect(problem).toContain('data.item.size');
  });

  it('refuses a JSON answer on a status the route declares no JSON schema for', () => {
    expect(answerProblem(response, 201, json, '{"success":true}', 'ApiError')).toBe('no JSON response schema for status 201');
    expect(answerProblem(response, 206, json, '{}', 'ApiError')).toBe('no JSON response schema for status 206');
  });

  it('checks an error answer of a route that declares none against the error shape', () => {
    expect(answerProblem(response, 404, json, JSON.stringify({ success: false, error: 'File not found' }), 'ApiError')).toBeNull();
    expect(answerProblem(response, 404, json, JSON.stringify({ error: 'File not found' }), 'ApiError')).toContain('success');
    expect(answerProblem(undefined, 405, json, JSON.stringify({ error: 'GET is not allowed here' }), 'Error')).toBeNull();
  });

  it('leaves bodies that are not JSON alone, and refuses a JSON type on a body that is not JSON', () => {
    expect(answerProblem(response, 206, 'application/octet-stream', 'bytes', 'Error')).toBeNull();
    expect(answerProblem(response, 200, json, 'not json', 'ApiError')).toBe('a body that is not JSON');
  });

  it('checks a JSON answer sent as bytes as its text', () => {
    const body = new TextEncoder().encode(JSON.stringify({ success: true, data: { item: { id: 'a', size: '1' } } }));
    expect(answerProblem(response, 200, json, Buffer.from(body), 'ApiError')).toContain('data.item.size');
    expect(answerProblem(response, 200, json, body.subarray(0, 0), 'ApiError')).toBe('a body that is not JSON');
  });

  it('leaves a streamed body or none alone where the route declares bytes or no body (a stored file of a JSON type)', () => {
    const stream = { pipe: () => undefined };
    expect(answerProblem(response, 206, json, stream, 'Error')).toBeNull();
    expect(answerProblem(response, 204, json, undefined, 'Error')).toBeNull();
    expect(answerProblem(response, 200, json, stream, 'ApiError')).toBe('a JSON answer that is not a string by the time it is sent');
  });
});

describe('missingResponses', () => {
  it('refuses a route without an answer of its own; errors alone do not count', () => {
    expect(missingResponses({ method: 'GET', url: '/api/x' })).toBe('Route GET /api/x declares no response schema');
    expect(missingResponses({ method: 'GET', url: '/api/x', schema: { response: { '4xx': record } } })).toBe('Route GET /api/x declares no response schema');
    expect(missingResponses({ method: 'DELETE', url: '/api/x', schema: { response: { 204: noBody('Deleted') } } })).toBeNull();
    expect(missingResponses({ method: 'HEAD', url: '/api/x' })).toBeNull();
  });
});

describe('serializerCompiler', () => {
  it('strips the fields a schema does not name', () => {
    const serialize = serializerCompiler({ schema: record, method: 'GET', url: '/api/x', httpStatus: '200' });
    expect(JSON.parse(serialize({ id: 'a', size: 1, passwordHash: 'secret', storageKey: 'files/u/a' }))).toEqual({ id: 'a', size: 1 });
  });

  it('throws on a value that breaks the schema, rather than sending it', () => {
    const serialize = serializerCompiler({ schema: record, method: 'GET', url: '/api/x', httpStatus: '200' });
    expect(() => serialize({ id: 'a' })).toThrow();
  });
});
