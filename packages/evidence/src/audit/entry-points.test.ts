import { describe, expect, it } from 'vitest';
import * as evidence from '../index.js';
import * as audit from './index.js';

describe('@agentd/evidence/audit', () => {
  it('holds the audit producers, which the evidence entry point no longer carries', () => {
    for (const name of ['createSecurityAudit', 'createConfigAudit', 'runAsActor', 'webhookAuditEvent']) {
      expect(name in audit, name).toBe(true);
      expect(name in evidence, name).toBe(false);
    }
    expect('EvidenceWriter' in evidence).toBe(true);
    expect('EvidenceWriter' in audit).toBe(false);
  });
});
