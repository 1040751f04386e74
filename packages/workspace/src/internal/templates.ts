/**
 * The files a new workspace starts with, committed as its first commit, and what
 * `resetFile` restores them to. Each is plain Markdown the agent and the operator edit.
 */
export const WORKSPACE_TEMPLATES: ReadonlyMap<string, string> = new Map([
  [
    'AGENTS.md',
    `# Standing instructions

Instructions this agent follows in every session. The operator edits this file; the agent
reads it at the start of its work and may propose changes.

- Work inside this workspace; every change here is versioned with git.
- Say what you changed and why, so the next commit tells the story.
`,
  ],
  [
    'IDENTITY.md',
    `# Identity

Who this agent is: its name, its role, the voice it answers in.

- Name:
- Role:
- Voice:
`,
  ],
  [
    'USER.md',
    `# User notes

What this agent knows about the people it works for: names, preferences, time zone,
things to remember. Keep it short and current.
`,
  ],
  [
    'TOOLS.md',
    `# Tool notes

Notes on the tools and programs this agent uses: what worked, what to avoid, local
conventions (paths, commands, accounts by name, never secrets).
`,
  ],
  [
    'HEARTBEAT.md',
    `# Heartbeat

The prompt of this agent's periodic wake. List what to check on each beat; an empty
checklist means there is nothing to do.

- [ ] Nothing scheduled yet.
`,
  ],
  [
    '.gitignore',
    `# Written by agentd. Generated speech is removed after an hour; it is never versioned.
/media/tts/
`,
  ],
]);
