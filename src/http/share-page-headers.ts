import type { FastifyReply } from 'fastify';

/** The headers of every share page and of its password form's answers: HTML under the page's policy, never framed. */
export function sharePageHeaders(reply: FastifyReply, policy: string): void {
  reply
    .type('text/html; charset=utf-8')
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('Content-Security-Policy', policy)
    // For browsers without CSP frame-ancestors.
    .header('X-Frame-Options', 'DENY');
}
