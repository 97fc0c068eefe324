// ragate's sticky pull-request comment, shared by the action (action.yml) and the fork-safe
// workflow_run workflow (.github/workflows/rag-gate-comment.yml); loaded by actions/github-script.
//
//   find({ github, context, prNumber, tier, author })              -> ids of ragate comments
//   upsert({ github, context, core, prNumber, tier, summaryPath, runUrl, sha, existing, reportUrl, author })
//
// One comment per pull request and tier, found again by the hidden marker on its first line and
// edited in place. Only a comment the token's own identity wrote is adopted: anyone can post a
// comment that starts with the marker, and editing or deleting it would let them steer the bot.
// The identity is `author` when given (the action's `comment-author` input), else the login
// GET /user names for the token (a personal access token), else `github-actions[bot]` (the
// workflow's GITHUB_TOKEN, which may not call GET /user). The summary is read as data (at most MAX_SUMMARY_BYTES; it may come from an
// untrusted artifact) and the body is kept under GitHub's 65,536-character limit. With a
// `reportUrl` (the HTML report's artifact, or the run's artifacts page), a `[HTML report](url)`
// line follows the summary; it is never cut off with it. A cut summary gets what it left open
// closed (a code fence, `<details>` blocks), so the note that it was cut and the footer show.
'use strict';

const fs = require('fs');

const LIMIT_BYTES = 65536 - 512; // GitHub's cap, with room to spare
const MAX_SUMMARY_BYTES = 1024 * 1024;
const TIER = /^[A-Za-z0-9_.-]{1,64}$/;
// An https URL that cannot end the Markdown link early or start another one.
const LINK = /^https:\/\/[A-Za-z0-9._~:/?#@!$&'*+,;=%-]{1,2000}$/;

function marker(tier) {
  if (!TIER.test(tier)) throw new Error(`ragate: tier '${tier}' is not a plain name ([A-Za-z0-9_.-]{1,64})`);
  return `<!-- ragate-gate:${tier} -->`;
}

const DEFAULT_AUTHOR = 'github-actions[bot]';

// The login whose comments are ragate's: `author`, the token's own user, or github-actions[bot].
async function commentAuthor({ github, author }) {
  if (author) return author;
  try {
    const { data } = await github.rest.users.getAuthenticated();
    if (data?.login) return data.login;
  } catch (err) {
    // An installation token (GITHUB_TOKEN) may not read /user: it posts as github-actions[bot].
  }
  return DEFAULT_AUTHOR;
}

async function find({ github, context, prNumber, tier, author }) {
  const { owner, repo } = context.repo;
  const login = (await commentAuthor({ github, author })).toLowerCase();
  const comments = await github.paginate(github.rest.issues.listComments, {
    owner, repo, issue_number: prNumber, per_page: 100,
  });
  const mark = marker(tier);
  return comments
    .filter((c) => (c.body ?? '').startsWith(mark) && (c.user?.login ?? '').toLowerCase() === login)
    .map((c) => c.id);
}

function readSummary(path, tier, runUrl) {
  try {
    const stat = fs.statSync(path);
    if (stat.size > MAX_SUMMARY_BYTES) {
      return `## ragate \`${tier}\`\n\nThe summary is over ${MAX_SUMMARY_BYTES} bytes; see the [workflow run](${runUrl}).\n`;
    }
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    return `## ragate \`${tier}\`: :warning: no summary\n\n` +
      `ragate wrote no summary (${err.code ?? err.message}); see the [workflow run](${runUrl}).\n`;
  }
}

// The `[HTML report](url)` line: empty without a URL; an error for one that is not a plain https URL.
function reportLine(tier, reportUrl) {
  if (!reportUrl) return '';
  if (!LINK.test(reportUrl)) {
    throw new Error(`ragate: the report URL '${reportUrl}' is not a plain https URL`);
  }
  return `\n\n[HTML report](${reportUrl}) (artifact \`ragate-report-${tier}\`: download, unzip, open report.html)`;
}

// How many `<details>` a cut summary may leave open: deeper ones are cut away with the rest.
const MAX_OPEN_DETAILS = 16;
const CLOSE_FENCE = '\n```';
const CLOSE_DETAILS = '\n\n</details>';

// `text` (a summary cut short) with what the cut left open closed: a code fence, then every
// `<details>` opened outside a fence and not closed (the blank line before each `</details>`
// ends a Markdown list or table inside it), so that the note and the footer after it are neither
// folded away nor shown as code. More than MAX_OPEN_DETAILS open: cut before the first too many.
function closeOpenBlocks(text) {
  let fenced = false;
  const open = []; // the offset of the line each open `<details>` is on
  let offset = 0;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
    } else if (!fenced) {
      for (let n = (line.match(/<details[\s>]/gi) ?? []).length; n > 0; n--) open.push(offset);
      for (let n = (line.match(/<\/details\s*>/gi) ?? []).length; n > 0 && open.length > 0; n--) open.pop();
    }
    offset += line.length + 1;
  }
  if (open.length > MAX_OPEN_DETAILS) {
    return closeOpenBlocks(text.slice(0, open[MAX_OPEN_DETAILS]).replace(/\n$/, ''));
  }
  return text + (fenced ? CLOSE_FENCE : '') + CLOSE_DETAILS.repeat(open.length);
}

function body({ tier, summary, runUrl, sha, reportUrl }) {
  const head = `${marker(tier)}\n`;
  const foot = `${reportLine(tier, reportUrl)}\n\n---\n<sub>Commit ${sha.slice(0, 7)}, [workflow run](${runUrl}); this comment is updated on every run.</sub>\n`;
  const bytes = (s) => Buffer.byteLength(s, 'utf8');
  let text = head + summary + foot;
  if (bytes(text) > LIMIT_BYTES) {
    const note = `\n\n> [!NOTE]\n> Summary truncated to stay under GitHub's 65,536-character comment limit; ` +
      `the full summary is in the [job summary](${runUrl}).\n`;
    // Room for the cut summary and what closes it (closeOpenBlocks).
    const closing = bytes(CLOSE_FENCE) + MAX_OPEN_DETAILS * bytes(CLOSE_DETAILS);
    const room = LIMIT_BYTES - bytes(head) - bytes(foot) - bytes(note) - closing - 8;
    // Cut on a byte boundary, drop a half character, then go back to the last full line.
    let cut = Buffer.from(summary, 'utf8').subarray(0, room).toString('utf8').replace(/\uFFFD+$/, '');
    const nl = cut.lastIndexOf('\n');
    if (nl > 0) cut = cut.slice(0, nl);
    text = head + closeOpenBlocks(cut) + note + foot;
  }
  return text;
}

async function upsert({ github, context, core, prNumber, tier, summaryPath, runUrl, sha, existing, reportUrl, author }) {
  const { owner, repo } = context.repo;
  const text = body({ tier, summary: readSummary(summaryPath, tier, runUrl), runUrl, sha, reportUrl });
  const ids = existing ?? await find({ github, context, prNumber, tier, author });
  if (ids.length === 0) {
    const { data } = await github.rest.issues.createComment({ owner, repo, issue_number: prNumber, body: text });
    core.info(`ragate: created comment ${data.html_url}`);
    return;
  }
  const { data } = await github.rest.issues.updateComment({ owner, repo, comment_id: ids[0], body: text });
  core.info(`ragate: updated comment ${data.html_url}`);
  // Two runs that raced may each have created one: keep the first.
  for (const id of ids.slice(1)) {
    await github.rest.issues.deleteComment({ owner, repo, comment_id: id });
  }
}

module.exports = { find, upsert, body, closeOpenBlocks, marker, reportLine, commentAuthor, DEFAULT_AUTHOR };
