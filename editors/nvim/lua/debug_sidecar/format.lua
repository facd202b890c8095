-- Pure formatting: turns protocol values into the text a person sees.
-- No I/O and no editor state here, so every function is a plain value -> string map.
local M = {}

M.spinner_frames = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

--- The spinner frame for a clock in milliseconds (one frame per 100 ms).
function M.spinner(now_ms)
  local n = #M.spinner_frames
  return M.spinner_frames[(math.floor((now_ms or 0) / 100) % n) + 1]
end

local HANDOFF_WORDS = {
  reproduce = 'reproduce',
  capture = 'capture',
  question = 'question',
  incomplete = 'agent stopped',
}

local STAGE_WORDS = {
  investigating = 'agent investigating',
  cleaning_up = 'agent cleaning up',
}

local function plural(n, one, many)
  return n == 1 and (n .. ' ' .. one) or (n .. ' ' .. many)
end

--- The status line text.
--- view = { status = 'missing'|'starting'|'running'|'crashed'|'stopped',
---          snapshot = <debug/status result>|nil, turn = {state, label}|nil,
---          bubble = <progress bubble>|nil }
--- frame: the spinner frame to show while the agent is busy.
function M.statusline(view, frame)
  local status = view.status
  if status == 'missing' then
    return 'debug: sidecar not found'
  elseif status == 'crashed' then
    return 'debug: sidecar stopped, :DebugRestart'
  elseif status == 'stopped' or status == nil then
    return ''
  end
  local snap = view.snapshot
  if status == 'starting' or not snap then
    return 'debug: starting…'
  end
  if not snap.active then
    return 'debug: off'
  end
  local parts = { 'debug r' .. tostring(snap.round or '?') }
  if snap.stage == 'user_turn' then
    local mode = HANDOFF_WORDS[snap.handoff or ''] or snap.handoff
    parts[#parts + 1] = mode and ('YOUR TURN (' .. mode .. ')') or 'YOUR TURN'
  else
    parts[#parts + 1] = STAGE_WORDS[snap.stage or ''] or tostring(snap.stage)
  end
  local turn = view.turn
  if turn and turn.state and turn.state ~= 'idle' then
    parts[#parts + 1] = (frame or M.spinner_frames[1]) .. ' ' .. (turn.label or turn.state)
  end
  local bubble = view.bubble
  if bubble and bubble.title then
    local b = bubble.title
    if type(bubble.percent) == 'number' then
      b = b .. ' ' .. bubble.percent .. '%'
    end
    parts[#parts + 1] = b
  end
  local live = snap.probes and snap.probes.live or 0
  if live > 0 then
    parts[#parts + 1] = plural(live, 'probe live', 'probes live')
  end
  return table.concat(parts, ' · ')
end

local COMMAND_HINTS = {
  proceed = ':DebugProceed [what you saw]',
  done = ':DebugDone (fixed)',
  abort = ':DebugAbort',
  start = ':DebugStart <problem>',
}
local HINT_ORDER = { 'proceed', 'done', 'abort', 'start' }

--- ":DebugProceed … · :DebugDone … · :DebugAbort" for the commands legal now.
function M.command_hints(user_commands)
  local legal = {}
  for _, c in ipairs(user_commands or {}) do
    legal[c] = true
  end
  local out = {}
  for _, c in ipairs(HINT_ORDER) do
    if legal[c] then
      out[#out + 1] = COMMAND_HINTS[c]
    end
  end
  return table.concat(out, '  ·  ')
end

local TURN_HEADLINES = {
  reproduce = 'reproduce the problem',
  capture = 'capture what the agent asks for',
  question = 'the agent has a question for you (see its chat)',
  incomplete = 'the agent stopped without handing over (see its chat)',
}

--- The notification sent when the round becomes the person's.
function M.user_turn_message(snap)
  local lines = {}
  local what = TURN_HEADLINES[snap.handoff or ''] or 'your move'
  lines[1] = string.format('Debug round %s: your turn: %s.', tostring(snap.round or '?'), what)
  local steps = snap.steps or {}
  if #steps > 0 then
    lines[#lines + 1] = 'Steps:'
    for i, step in ipairs(steps) do
      lines[#lines + 1] = string.format('  %d. %s', i, step)
    end
  end
  local pending = snap.pendingUserActions or {}
  if #pending > 0 then
    lines[#lines + 1] = 'The agent also needs:'
    for _, req in ipairs(pending) do
      local text = table.concat(req.instructions or {}, ' ')
      lines[#lines + 1] = string.format('  - [%s] %s', tostring(req.id), text)
    end
  end
  local hints = M.command_hints(snap.userCommands)
  if hints ~= '' then
    lines[#lines + 1] = 'Then: ' .. hints
  end
  return table.concat(lines, '\n')
end

--- A key that changes whenever the person gets a new round or a new hand-off in it.
function M.user_turn_key(snap)
  if not snap or not snap.active or snap.stage ~= 'user_turn' then
    return nil
  end
  return table.concat({
    tostring(snap.sessionId),
    tostring(snap.round),
    tostring(snap.handoff),
    table.concat(snap.steps or {}, '\n'),
  }, '\31')
end

local function hypothesis_index(snap)
  local by_id = {}
  for _, h in ipairs(snap and snap.hypotheses or {}) do
    by_id[h.id] = h
  end
  return by_id
end

local function join_path(root, file)
  if file:sub(1, 1) == '/' then
    return file
  end
  return root .. '/' .. file
end

--- Quickfix items for a debug/probes result.
function M.probe_items(result, snap, root)
  local hyps = hypothesis_index(snap)
  local items = {}
  for _, p in ipairs(result.probes or {}) do
    local text = p.id
    if p.hypothesisId then
      local h = hyps[p.hypothesisId]
      if h then
        text = string.format('%s %s [%s] %s', text, h.id, h.status or '?', h.statement or '')
      else
        text = text .. ' ' .. p.hypothesisId
      end
    end
    local where = p.state == 'live' and 'live'
      or p.state == 'missing' and 'missing: not found on disk'
      or 'issued: not yet found on disk'
    items[#items + 1] = {
      filename = join_path(root, p.file),
      lnum = (type(p.line) == 'number' and p.line > 0) and p.line or 1,
      col = 1,
      type = p.state == 'live' and 'I' or 'W',
      text = string.format('%s (round %s, %s)', text, tostring(p.round), where),
    }
  end
  for _, h in ipairs(result.halfRemoved or {}) do
    items[#items + 1] = {
      filename = join_path(root, h.file),
      lnum = h.line,
      col = 1,
      type = 'E',
      text = h.probeId .. ' half removed: a marker without its pair',
    }
  end
  for _, f in ipairs(result.foreign or {}) do
    items[#items + 1] = {
      filename = join_path(root, f.file),
      lnum = f.line,
      col = 1,
      type = 'W',
      text = string.format('foreign probe (%s): %s', f.kind, f.text),
    }
  end
  return items
end

function M.probes_title(result)
  local n = #(result.probes or {})
  return string.format('debug-sidecar probes: %s, %s live', plural(n, 'probe', 'probes'), tostring(result.live or 0))
end

local function encode(v)
  local ok, s = pcall(vim.json.encode, v)
  return ok and s or tostring(v)
end

--- One log entry ({line, entry}) as one line of text.
function M.log_line(e)
  local entry = e.entry
  if type(entry) ~= 'table' then
    return string.format('%5d  %s', e.line, encode(entry))
  end
  local parts = {}
  if type(entry.timestamp) == 'number' then
    local secs = math.floor(entry.timestamp / 1000)
    parts[#parts + 1] = os.date('%H:%M:%S', secs) .. string.format('.%03d', entry.timestamp % 1000)
  end
  if entry.probeId then
    parts[#parts + 1] = tostring(entry.probeId)
  end
  if entry.hypothesisId then
    parts[#parts + 1] = '[' .. tostring(entry.hypothesisId) .. ']'
  end
  if entry.location then
    parts[#parts + 1] = tostring(entry.location) .. ':'
  end
  if entry.message then
    parts[#parts + 1] = tostring(entry.message)
  end
  if entry.data ~= nil then
    parts[#parts + 1] = encode(entry.data)
  end
  if #parts == 0 then
    parts[1] = encode(entry)
  end
  return string.format('%5d  %s', e.line, table.concat(parts, ' '))
end

function M.log_header(snap, run, file)
  return {
    string.format('debug-sidecar log, run %s (round %s)', tostring(run), tostring(snap and snap.round or '?')),
    '  ' .. tostring(file or (snap and snap.logFile) or ''),
    '',
  }
end

-- Subagents (:DebugAgents). An id up to NAME characters is a name a person reads
-- (oh-my-pi's `Alpha`); a longer one is machine-made (pi-subagents' `<run uuid>:<index>`),
-- and the row is named by its task, cut to LABEL characters.
local AGENT_NAME, AGENT_LABEL, AGENT_DETAIL = 24, 60, 100

--- Text from the agent's host as one line: control characters become spaces.
local function one_line(text)
  return vim.trim((tostring(text):gsub('%c+', ' ')))
end

local function cut(text, max)
  if vim.fn.strchars(text) <= max then
    return text
  end
  return vim.fn.strcharpart(text, 0, max - 1) .. '…'
end

--- The name a subagent's row shows.
function M.agent_name(r)
  local task = type(r.description) == 'string' and one_line(r.description) or ''
  if vim.fn.strchars(r.id or '') <= AGENT_NAME or task == '' then
    return one_line(r.id or '?')
  end
  return cut(task, AGENT_LABEL)
end

--- The Subagents buffer: a header, then per record its state, name, type and work, and
--- under it its question, result or error.
function M.agent_lines(records)
  local lines = { string.format('debug-sidecar subagents (%d)', #records), '' }
  if #records == 0 then
    lines[#lines + 1] = 'No subagents reported yet.'
    return lines
  end
  for _, r in ipairs(records) do
    local live = r.status == 'queued' or r.status == 'running'
    local asking = live and type(r.pendingQuestion) == 'string' and r.pendingQuestion ~= ''
    local parts = { M.agent_name(r) }
    if type(r.type) == 'string' and r.type ~= '' then
      parts[#parts + 1] = one_line(r.type)
    end
    if (r.toolUses or 0) > 0 then
      parts[#parts + 1] = plural(r.toolUses, 'tool', 'tools')
    end
    if (r.turns or 0) > 0 then
      parts[#parts + 1] = plural(r.turns, 'turn', 'turns')
    end
    lines[#lines + 1] = string.format('%-15s %s', asking and 'asks a question' or tostring(r.status), table.concat(parts, ' · '))
    local detail
    if asking then
      detail = '? ' .. r.pendingQuestion
    elseif type(r.error) == 'string' and r.error ~= '' then
      detail = r.error
    elseif type(r.result) == 'string' and r.result ~= '' then
      detail = r.result
    end
    if detail then
      lines[#lines + 1] = '                ' .. cut(one_line(detail), AGENT_DETAIL)
    end
  end
  return lines
end

--- The warning shown after an abort that left probes in files.
function M.leftover_message(probes)
  local lines = { 'Debug session aborted; probes are still in your files:' }
  for _, p in ipairs(probes) do
    lines[#lines + 1] = string.format('  %s:%s  %s', p.file, tostring(p.line or '?'), p.id)
  end
  lines[#lines + 1] = 'Remove the blocks between `#region debug-probe` and `#endregion debug-probe`.'
  return table.concat(lines, '\n')
end

return M
