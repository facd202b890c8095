-- Headless test of the Neovim client against the real debug-sidecar binary.
-- Run: nvim --headless -u NONE -i NONE -l test/session_spec.lua   (DEBUG_SIDECAR_BIN set)
-- The test plays the person (the :Debug* commands) and the agent, from other processes as
-- in real use: a second `debug-sidecar serve` on the workspace (test/peer.lua) and the
-- agent's hooks (`debug-sidecar hook claude <Event>`). It checks what the person sees:
-- status line, notifications, quickfix list and the log buffer.

local here = vim.fs.dirname(vim.fs.normalize(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p')))
local plugin_root = vim.fs.dirname(here)
vim.opt.rtp:prepend(plugin_root)
vim.o.swapfile = false
vim.o.more = false

local BIN = os.getenv('DEBUG_SIDECAR_BIN')
local TIMEOUT = 10000

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

if not BIN or BIN == '' or vim.fn.executable(BIN) ~= 1 then
  out('FAIL setup: DEBUG_SIDECAR_BIN is not an executable file: ' .. tostring(BIN))
  vim.cmd('cquit 1')
end

-- Notifications, recorded instead of shown.
local notes = {}
vim.notify = function(msg, level, _)
  notes[#notes + 1] = { msg = msg, level = level or vim.log.levels.INFO }
end
local LEVEL_NAMES = { [0] = 'TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR' }

local capture = {} -- what the person sees, printed at the end for the README
local function see(title, text)
  capture[#capture + 1] = '--- ' .. title
  for line in (text .. '\n'):gmatch('(.-)\n') do
    capture[#capture + 1] = '  ' .. line
  end
end

local ds = require('debug_sidecar')
local S = ds._state

---------------------------------------------------------------------------
-- helpers
---------------------------------------------------------------------------

local function fail(msg)
  error(msg, 2)
end

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

local function wait_for(what, pred)
  local ok = vim.wait(TIMEOUT, pred, 10)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
end

local function statusline()
  return ds.statusline()
end

local function check_status(expected)
  local s = statusline()
  if type(expected) == 'string' then
    check(s == expected, string.format('status line %q, expected %q', s, expected))
  else
    for _, pat in ipairs(expected) do
      check(s:find(pat, 1, true), string.format('status line %q lacks %q', s, pat))
    end
  end
  return s
end

local function wait_status(expected)
  local ok = vim.wait(TIMEOUT, function()
    return statusline() == expected
  end, 10)
  check(ok, string.format('status line %q, expected %q', statusline(), expected))
  return expected
end

-- The first notification from `from` on whose text contains every needle.
local function find_note(from, level, needles)
  for i = from, #notes do
    local n = notes[i]
    if n.level == level then
      local all = true
      for _, needle in ipairs(needles) do
        if not n.msg:find(needle, 1, true) then
          all = false
          break
        end
      end
      if all then
        return n, i
      end
    end
  end
end

local function wait_note(from, level, needles)
  local found
  local ok = vim.wait(TIMEOUT, function()
    found = find_note(from, level, needles)
    return found ~= nil
  end, 10)
  if not ok then
    local got = {}
    for i = from, #notes do
      got[#got + 1] = LEVEL_NAMES[notes[i].level] .. ': ' .. notes[i].msg
    end
    error(
      string.format(
        'no %s notification with %s; got:\n  %s',
        LEVEL_NAMES[level],
        vim.inspect(needles),
        table.concat(got, '\n  ')
      ),
      2
    )
  end
  return found
end

local function read_file(path)
  local f = assert(io.open(path, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

local function write_file(path, s)
  local f = assert(io.open(path, 'w'))
  f:write(s)
  f:close()
end

local function pid_alive(pid)
  return pid and vim.uv.kill(pid, 0) == 0
end

local function wait_running()
  wait_for('the sidecar to be running with a state', function()
    return S.status == 'running' and S.snapshot ~= nil
  end)
end

local function stop_and_wait()
  local id = ds.stop()
  if id then
    wait_for('the client to stop', function()
      local c = vim.lsp.get_client_by_id(id)
      return c == nil or c:is_stopped()
    end)
  end
end

local function qf_text()
  local lines = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(it.bufnr), ':t')
    lines[#lines + 1] = string.format('%s|%d| %s', name, it.lnum, it.text)
  end
  return table.concat(lines, '\n')
end

local function log_buffer_text()
  if not (S.logs.buf and vim.api.nvim_buf_is_valid(S.logs.buf)) then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(S.logs.buf, 0, -1, false), '\n')
end

---------------------------------------------------------------------------
-- the workspace
---------------------------------------------------------------------------

-- Our own temp dir (not tempname(): Neovim's temp dir is not removed on os.exit).
local tmp = vim.fn.resolve(assert(vim.uv.fs_mkdtemp((os.getenv('TMPDIR') or '/tmp') .. '/ds-nvim-XXXXXX')))
local ws = tmp .. '/shop'
vim.fn.mkdir(ws .. '/.git', 'p') -- the root marker the plugin looks for
vim.fn.mkdir(ws .. '/src', 'p')
local src = ws .. '/checkout.sh'
local ORIGINAL = table.concat({
  '#!/bin/sh',
  '# total of the prices given, with 10% off from 3 items',
  'count=$#',
  'total=0',
  'for p in "$@"; do total=$((total + p)); done',
  'if [ "$count" -gt 3 ]; then total=$((total * 9 / 10)); fi',
  'echo "$total"',
  '',
}, '\n')
write_file(src, ORIGINAL)

local pidfile = tmp .. '/server.pid'
local wrapper = tmp .. '/debug-sidecar-wrapper'
write_file(
  wrapper,
  string.format('#!/bin/sh\necho $$ > %s\nexec %s "$@"\n', vim.fn.shellescape(pidfile), vim.fn.shellescape(BIN))
)
vim.fn.setfperm(wrapper, 'rwxr-xr-x')

local function server_pid()
  local ok, s = pcall(read_file, pidfile)
  return ok and tonumber(vim.trim(s)) or nil
end

-- Opening a file of the workspace from a subdirectory: the plugin must find the root.
vim.cmd.cd(vim.fn.fnameescape(ws .. '/src'))
vim.cmd.edit(vim.fn.fnameescape(src))

-- The snippet goes after `count=$#`.
local function insert_probe(snippet)
  local lines = vim.split(read_file(src), '\n', { plain = true })
  local outl = {}
  for _, l in ipairs(lines) do
    outl[#outl + 1] = l
    if l == 'count=$#' then
      outl[#outl + 1] = snippet:gsub('\n$', '')
    end
  end
  write_file(src, table.concat(outl, '\n'))
end

-- Claude Code's hooks: `debug-sidecar hook claude <event>` with the harness's JSON on stdin.
local AGENT_SESSION = 'claude-7f3c'
local function hook(event, extra)
  local input = vim.tbl_extend('force', {
    session_id = AGENT_SESSION,
    transcript_path = tmp .. '/transcript.jsonl',
    cwd = ws,
    hook_event_name = event,
  }, extra or {})
  local r = vim.system({ BIN, 'hook', 'claude', event }, { cwd = ws, stdin = vim.json.encode(input), text = true }):wait(TIMEOUT)
  check(r.code == 0, string.format('hook %s exited with %s: %s', event, tostring(r.code), tostring(r.stderr)))
  return r.stdout
end

local function run_program(...)
  local args = { 'sh', src }
  vim.list_extend(args, { ... })
  local r = vim.system(args, { cwd = ws, text = true }):wait()
  check(r.code == 0, 'checkout.sh failed: ' .. tostring(r.stderr))
  return vim.trim(r.stdout)
end

local Peer = dofile(here .. '/peer.lua')
local peers = {} -- every agent process started, closed at the end

local function start_peer(init_options)
  local p = Peer.start(BIN, ws, { timeout = TIMEOUT, init_options = init_options })
  peers[#peers + 1] = p
  return p
end

-- The agent's side: its own sidecar process on the workspace, acting on the session the
-- person started (an agent names its session; this one names the person's).
local agent_peer
local function for_session(params)
  params = params or {}
  if params.sessionId == nil and S.snapshot then
    params.sessionId = S.snapshot.sessionId
  end
  return params
end

local function agent(method, params)
  agent_peer = agent_peer or start_peer(nil)
  return agent_peer:request(method, for_session(params))
end

local function agent_notify(method, params)
  agent_peer = agent_peer or start_peer(nil)
  agent_peer:notify(method, for_session(params))
end

---------------------------------------------------------------------------
-- cases
---------------------------------------------------------------------------

local cases = {}
local function case(name, fn)
  cases[#cases + 1] = { name = name, fn = fn }
end

case('formatting: hand-off modes, user work, activity bubble, odd log entries', function()
  local F = require('debug_sidecar.format')
  local snap = {
    sessionId = 's', active = true, stage = 'user_turn', round = 3, handoff = 'question',
    steps = {}, probes = { live = 2, list = {} }, userCommands = { 'proceed', 'done', 'abort' },
    pendingUserActions = { { id = 'E2', method = 'user_report', instructions = { 'Say what the page shows.' } } },
  }
  local msg = F.user_turn_message(snap)
  check(msg == table.concat({
    'Debug round 3: your turn: the agent has a question for you (see its chat).',
    'The agent also needs:',
    '  - [E2] Say what the page shows.',
    'Then: :DebugProceed [what you saw]  ·  :DebugDone (fixed)  ·  :DebugAbort',
  }, '\n'), 'message:\n' .. msg)
  local v = { status = 'running', snapshot = snap, turn = { state = 'streaming', label = 'streaming…' },
    bubble = { kind = 'activity', title = 'Activity', line = 'Reading' } }
  local line = F.statusline(v, '⠹')
  check(line == 'debug r3 · YOUR TURN (question) · ⠹ streaming… · Activity · 2 probes live', line)
  snap.stage, snap.handoff = 'user_turn', 'incomplete'
  check(F.statusline({ status = 'running', snapshot = snap }, 'x') == 'debug r3 · YOUR TURN (agent stopped) · 2 probes live', 'incomplete')
  check(F.statusline({ status = 'stopped' }) == '', 'stopped')
  check(F.log_line({ line = 7, entry = 'plain text' }) == '    7  "plain text"', F.log_line({ line = 7, entry = 'plain text' }))
  check(F.log_line({ line = 8, entry = { other = 1 } }) == '    8  {"other":1}', 'object without probe fields')
  check(F.spinner(0) == F.spinner_frames[1] and F.spinner(100) == F.spinner_frames[2], 'spinner')
  local items = F.probe_items({
    probes = { { id = 'p9', file = 'a.py', round = 1, state = 'issued', hypothesisId = 'H7' } },
    halfRemoved = { { file = 'b.py', line = 3, probeId = 'p4' } },
    foreign = { { file = 'c.js', line = 5, kind = 'cursorAgentLog', text = '// #region agent log' } },
  }, { hypotheses = {} }, '/w')
  check(#items == 3, #items .. ' items')
  check(items[1].filename == '/w/a.py' and items[1].lnum == 1 and items[1].text == 'p9 H7 (round 1, issued: not yet found on disk)', items[1].text)
  check(items[2].type == 'E' and items[2].text == 'p4 half removed: a marker without its pair', items[2].text)
  check(items[3].text == 'foreign probe (cursorAgentLog): // #region agent log', items[3].text)
end)

case('missing binary: a clear error, the status line says so, commands repeat it', function()
  local from = #notes + 1
  local missing = tmp .. '/no-such-dir/debug-sidecar'
  local started = ds.setup({ cmd = { missing, 'serve' } })
  check(started == false, 'setup reported a start with a missing binary')
  local n = find_note(from, vim.log.levels.ERROR, { 'was not found or is not executable', missing })
  check(n, 'no ERROR notification naming the missing binary; got ' .. vim.inspect(notes[from]))
  see('notification (ERROR), binary missing', n.msg)
  check_status('debug: sidecar not found')
  local from2 = #notes + 1
  vim.cmd('DebugStart anything')
  check(find_note(from2, vim.log.levels.ERROR, { 'was not found or is not executable' }), ':DebugStart did not repeat the error')
  check(S.client_id == nil, 'a client exists without a binary')
end)

case('start: root found from a subdirectory, status off, :DebugStart asks for the problem', function()
  check(ds.setup({ cmd = { wrapper, 'serve' } }) == true, 'setup did not start the sidecar')
  check_status('debug: starting…')
  wait_running()
  check(S.root == ws, string.format('root %q, expected %q', tostring(S.root), ws))
  check_status('debug: off')
  check(pid_alive(server_pid()), 'no server process')
  -- The status line expression the README gives.
  vim.o.statusline = "%f %m%= %{v:lua.require'debug_sidecar'.statusline()} "
  local drawn = vim.api.nvim_eval_statusline(vim.o.statusline, { maxwidth = 200 }).str
  check(drawn:find('debug: off', 1, true), 'the README status line draws ' .. drawn)

  -- No argument: the problem is asked for.
  local asked
  local orig_input = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    asked = opts.prompt
    on_confirm('Checkout total ignores the 3-item discount.')
  end
  local from = #notes + 1
  vim.cmd('DebugStart')
  vim.ui.input = orig_input
  check(asked and asked:find('problem'), 'vim.ui.input was not asked for the problem')
  wait_note(from, vim.log.levels.INFO, { 'Debug session started (round 1)' })
  wait_status('debug r1 · agent investigating')
  check(S.snapshot.problem == 'Checkout total ignores the 3-item discount.', 'problem not recorded')
  see('status line, the agent investigates', statusline())
end)

case('the agent works: spinner with the turn label, progress bubble', function()
  agent_notify('turn/event', { kind = 'turnStart', source = 'user' })
  agent_notify('turn/event', { kind = 'reasoning' })
  wait_for('turn state thinking', function()
    return S.turn and S.turn.state == 'thinking'
  end)
  local s = check_status({ 'debug r1 · agent investigating · ', ' thinking…' })
  local frame = s:match('investigating · (.-) thinking…')
  check(frame and vim.tbl_contains(require('debug_sidecar.format').spinner_frames, frame), 'no spinner frame in ' .. s)
  agent_notify('progress/todos', {
    todos = {
      { content = 'Read checkout.sh', status = 'completed' },
      { content = 'Add probes', activeForm = 'Adding probes', status = 'in_progress' },
    },
  })
  wait_for('the progress bubble', function()
    return S.bubble and S.bubble.percent == 50
  end)
  s = check_status({ ' thinking…', 'Adding probes 50%' })
  see('status line, the agent thinks and reports progress', s)
end)

local probe_id
case('hand-off: the person is notified with the steps; status says YOUR TURN', function()
  agent('debug/recordHypotheses', {
    hypotheses = {
      { id = 'H1', statement = 'The discount check uses -gt instead of -ge.', status = 'open' },
      { id = 'H2', statement = 'The item count is off by one.', status = 'open' },
    },
  })
  local r = agent('debug/probeSnippet', {
    file = 'checkout.sh',
    hypothesisId = 'H1',
    message = 'count before the discount check',
    variables = { 'count' },
  })
  probe_id = r.probe.id
  check(probe_id and r.snippet:find('debug%-probe ' .. probe_id), 'snippet without its marker')
  insert_probe(r.snippet)
  agent_notify('turn/event', { kind = 'toolCall', tool = 'Edit' })
  local from = #notes + 1
  agent('debug/handOff', {
    mode = 'reproduce',
    steps = { 'Run `sh checkout.sh 1000 2000 3000`.', 'Check the total it prints.' },
  })
  agent_notify('turn/event', { kind = 'turnEnd' })
  local n = wait_note(from, vim.log.levels.WARN, {
    'Debug round 1: your turn: reproduce the problem.',
    '1. Run `sh checkout.sh 1000 2000 3000`.',
    '2. Check the total it prints.',
    ':DebugProceed',
    ':DebugDone',
    ':DebugAbort',
  })
  see('notification (WARN), the round is yours', n.msg)
  wait_for('turn idle', function()
    return S.turn and S.turn.state == 'idle'
  end)
  -- The bubble is retired at turn end; the probe shows once a scan found it.
  wait_for('bubble retired', function()
    return S.bubble == nil
  end)
  local s = statusline()
  check(
    s == 'debug r1 · YOUR TURN (reproduce)' or s == 'debug r1 · YOUR TURN (reproduce) · 1 probe live',
    'status line ' .. s
  )
  -- Exactly one "your turn" notification for this hand-off, even with repeated state.
  local count = 0
  for i = from, #notes do
    if notes[i].msg:find('your turn', 1, true) then
      count = count + 1
    end
  end
  check(count == 1, count .. ' "your turn" notifications for one hand-off')
end)

case(':DebugProbes: the quickfix list has the probe with its hypothesis', function()
  vim.fn.setqflist({}, 'r', { title = 'before', items = {} })
  vim.cmd('DebugProbes')
  wait_for('the quickfix list', function()
    return vim.fn.getqflist({ title = 1 }).title:find('debug-sidecar probes', 1, true) ~= nil
  end)
  local items = vim.fn.getqflist()
  check(#items == 1, #items .. ' quickfix items, expected 1')
  local it = items[1]
  check(vim.api.nvim_buf_get_name(it.bufnr) == src, 'quickfix file ' .. vim.api.nvim_buf_get_name(it.bufnr))
  local marker_line
  for i, l in ipairs(vim.split(read_file(src), '\n', { plain = true })) do
    if l:find('#region debug-probe ' .. probe_id, 1, true) then
      marker_line = i
      break
    end
  end
  check(it.lnum == marker_line, string.format('quickfix line %d, the marker is on %s', it.lnum, tostring(marker_line)))
  check(it.text:find(probe_id .. ' H1 [open] The discount check uses -gt instead of -ge.', 1, true), 'quickfix text ' .. it.text)
  check(it.text:find('live', 1, true), 'probe not live: ' .. it.text)
  check(vim.fn.getqflist({ title = 1 }).title == 'debug-sidecar probes: 1 probe, 1 live', 'title ' .. vim.fn.getqflist({ title = 1 }).title)
  check(vim.bo.buftype == 'quickfix', 'the quickfix window was not opened')
  vim.cmd('cclose')
  wait_status('debug r1 · YOUR TURN (reproduce) · 1 probe live')
  see('status line, the person reproduces', statusline())
  see(':DebugProbes, the quickfix list (' .. vim.fn.getqflist({ title = 1 }).title .. ')', qf_text())
end)

case(':DebugLogs shows the run\'s lines and follows new ones', function()
  -- The person runs the program: the real probe appends to the run's log.
  check(run_program('1000', '2000', '3000') == '6000', 'unexpected program output')
  vim.cmd('DebugLogs')
  wait_for('the probe line in the log buffer', function()
    return log_buffer_text():find('"count":"3"', 1, true) ~= nil
  end)
  local text = log_buffer_text()
  check(text:find('run ' .. S.snapshot.runId, 1, true), 'no run header:\n' .. text)
  check(text:find(probe_id .. ' [H1] checkout.sh: count before the discount check {"count":"3"}', 1, true), 'log line:\n' .. text)
  check(vim.api.nvim_buf_get_name(0):find('debug-sidecar://logs', 1, true), 'the log buffer is not shown')
  -- A line written by something else (the simulated program) while the buffer is open.
  local f = assert(io.open(S.snapshot.logFile, 'a'))
  f:write(vim.json.encode({
    probeId = probe_id,
    hypothesisId = 'H1',
    location = 'checkout.sh',
    message = 'count before the discount check',
    data = { count = '4' },
    timestamp = (function()
      local sec, usec = vim.uv.gettimeofday()
      return sec * 1000 + math.floor(usec / 1000)
    end)(),
  }) .. '\n')
  f:close()
  local tail_ok = vim.wait(TIMEOUT, function()
    return log_buffer_text():find('"count":"4"', 1, true) ~= nil
  end, 20)
  if not tail_ok then
    fail('the log buffer did not follow a new line (debug/logAppended):\n' .. log_buffer_text())
  end
  -- Each line once.
  local _, n3 = log_buffer_text():gsub('"count":"3"', '')
  check(n3 == 1, 'the first line is shown ' .. n3 .. ' times')
  see(':DebugLogs buffer', log_buffer_text())
  vim.cmd('close')
end)

case(':DebugAgents shows a real host\'s subagents, asking and ended, as they change', function()
  -- The records pi-subagents' background runs became in a real pi session (the harness
  -- lab checks this file against what the host sends), sent as that host's extension
  -- sends them: on the agent's own connection, without a session id.
  local fixture = plugin_root .. '/../vscode/browser/fixtures/pi-subagents.jsonl'
  local events = {}
  for _, line in ipairs(vim.split(read_file(fixture), '\n', { trimempty = true })) do
    events[#events + 1] = vim.json.decode(line)
  end
  local asked
  for i, e in ipairs(events) do
    if asked == nil and type(e.question) == 'string' and e.question ~= '' then
      asked = i
    end
  end
  check(asked, 'the fixture holds no question')
  agent_peer = agent_peer or start_peer(nil)
  for i = 1, asked do
    agent_peer:notify('agents/event', events[i])
  end
  vim.cmd('DebugAgents')
  check(vim.api.nvim_buf_get_name(0):find('debug-sidecar://subagents', 1, true), 'the subagents buffer is not shown')
  local agents = require('debug_sidecar.agents')
  local work = ' · delegate · [%d]+ tools? · [%d]+ turns?\n'
  local function shows(patterns)
    local text = agents.text() .. '\n'
    for _, pat in ipairs(patterns) do
      if not text:find(pat) then
        return false
      end
    end
    return true
  end
  local ended = {
    'completed +CHILDS sum the prices' .. work .. ' +Solo summed 12\n',
    'completed +CHILDA count the items' .. work .. ' +Alpha counted 3 items\n',
    'error +CHILDB read the config · delegate · 1 turn\n +Subagent produced no output',
  }
  wait_for('three ended and one asking:\n' .. agents.text(), function()
    return shows(vim.list_extend({ 'asks a question CHILDQ check the discount' .. work .. ' +%? Which file holds the discount%?\n' }, ended))
  end)
  see(':DebugAgents, one asking', agents.text())
  for i = asked + 1, #events do
    agent_peer:notify('agents/event', events[i])
  end
  wait_for('all four ended:\n' .. agents.text(), function()
    return shows(vim.list_extend({ 'completed +CHILDQ check the discount' .. work .. ' +the discount is in cart.py\n' }, ended))
  end)
  check(agents.text():find('debug-sidecar subagents (4)', 1, true), 'header:\n' .. agents.text())
  see(':DebugAgents, all ended', agents.text())
  vim.cmd('close')
end)

case('formatting: a subagent named by its task, its untrusted text on one line', function()
  local F = require('debug_sidecar.format')
  local id = '7acaa35c-84ff-49b6-a85a-928411694f3b:0'
  check(F.agent_name({ id = 'Alpha', description = 'count the items' }) == 'Alpha', 'a short id is the name')
  check(F.agent_name({ id = id, description = 'count\tthe\nitems' }) == 'count the items', F.agent_name({ id = id, description = 'count\tthe\nitems' }))
  check(F.agent_name({ id = id }) == id, 'no task: the id')
  local long = F.agent_name({ id = id, description = string.rep('check every item ', 10) })
  check(vim.fn.strchars(long) == 60 and long:sub(-3) == '…', long)
  local lines = F.agent_lines({ { id = id, status = 'error', error = 'bad\27[2Jthing\nhappened', turns = 1 } })
  check(#lines == 4 and not lines[4]:find('%c'), vim.inspect(lines))
  check(lines[3] == 'error           ' .. id .. ' · 1 turn', vim.inspect(lines))
  check(vim.deep_equal(F.agent_lines({}), { 'debug-sidecar subagents (0)', '', 'No subagents reported yet.' }), 'empty')
end)

case('an illegal command shows the server\'s own message', function()
  local from = #notes + 1
  vim.cmd('DebugStart A second problem')
  local n = wait_note(from, vim.log.levels.ERROR, { 'Cannot start a debug session: a debug session is already active' })
  see('notification (ERROR), :DebugStart while a session is active', n.msg)
  check(S.snapshot.stage == 'user_turn', 'the stage changed after a refused command')
end)

case(':DebugMark puts the moment with the words into the run', function()
  local from = #notes + 1
  vim.cmd('DebugMark it froze right after Save')
  local n = wait_note(from, vim.log.levels.INFO, { 'Marked "it froze right after Save" at line ' })
  see('notification, :DebugMark it froze right after Save', n.msg)
  check(n.msg:find(' of run r1%-'), n.msg)
end)

case(':DebugProceed hands the round back to the agent', function()
  local from = #notes + 1
  vim.cmd('DebugProceed It printed 6000, not 5400.')
  wait_note(from, vim.log.levels.INFO, { "Round 2 is the agent's now" })
  wait_status('debug r2 · agent investigating · 1 probe live')
  check(S.snapshot.round == 2, 'round ' .. tostring(S.snapshot.round))
  check(S.snapshot.stage == 'investigating', 'stage ' .. tostring(S.snapshot.stage))
  -- The agent fixes the bug and hands the round over for verification.
  write_file(src, (read_file(src):gsub('%-gt 3', '-ge 3')))
  agent('debug/recordHypotheses', {
    hypotheses = { { id = 'H1', statement = 'The discount check uses -gt instead of -ge.', status = 'confirmed', evidence = { 'count=3' } } },
  })
  local from3 = #notes + 1
  agent('debug/handOff', { mode = 'reproduce', steps = { 'Run it again; it should print 5400.' } })
  local n2 = wait_note(from3, vim.log.levels.WARN, { 'Debug round 2: your turn', '1. Run it again; it should print 5400.' })
  check(not n2.msg:find('2. ', 1, true), 'old steps in the round 2 notification')
  wait_status('debug r2 · YOUR TURN (reproduce) · 1 probe live')
end)

case(':DebugDone: the agent cleans up; the session ends when no probe is left', function()
  local from = #notes + 1
  vim.cmd('DebugDone fixed, it prints 5400')
  wait_note(from, vim.log.levels.INFO, { 'Marked fixed' })
  wait_status('debug r2 · agent cleaning up · 1 probe live')
  see('status line, the agent cleans up', statusline())
  -- The agent removes its probe block and stops.
  local lines, outl, skipping = vim.split(read_file(src), '\n', { plain = true }), {}, false
  for _, l in ipairs(lines) do
    if l:find('#region debug-probe', 1, true) then
      skipping = true
    elseif l:find('#endregion debug-probe', 1, true) then
      skipping = false
    elseif not skipping then
      outl[#outl + 1] = l
    end
  end
  write_file(src, table.concat(outl, '\n'))
  check(not read_file(src):find('debug-probe', 1, true), 'probe still in the file')
  local r = agent('debug/stop', { lastAssistantMessage = 'Fixed: -gt became -ge.' })
  check(r.decision == 'allow', 'stop decision ' .. tostring(r.decision))
  wait_note(from, vim.log.levels.INFO, { 'Debug session ended.' })
  wait_status('debug: off')
end)

case(':DebugAbort lists probes left in files', function()
  local from = #notes + 1
  vim.cmd('DebugStart The total is negative for refunds.')
  wait_status('debug r1 · agent investigating')
  local r = agent('debug/probeSnippet', { file = 'checkout.sh', message = 'total', variables = { 'total' } })
  insert_probe(r.snippet)
  agent('debug/probes', { rescan = true })
  vim.cmd('DebugAbort')
  local n = wait_note(from, vim.log.levels.WARN, { 'Debug session aborted; probes are still in your files:', 'checkout.sh:4  ' .. r.probe.id })
  see('notification (WARN), :DebugAbort with a probe left', n.msg)
  wait_status('debug: off')
  check(find_note(from, vim.log.levels.INFO, { 'Debug session ended.' }) == nil, 'an abort was announced as an ended session')
end)

case("the agent's hooks (other processes) drive the status line: label, spinner, then idle", function()
  -- The agent's sidecar starts a session of its own (as its MCP server does with
  -- DEBUG_SIDECAR_SESSION): the plugin follows it, and the hooks, whose input names Claude
  -- Code's session, act on the workspace's latest debug session: this one.
  local claude = start_peer({ sessionId = AGENT_SESSION })
  local from = #notes + 1
  claude:request('debug/start', { problem = 'The total is wrong for two items.' })
  wait_for("the plugin to follow the agent's session", function()
    return S.snapshot.sessionId == AGENT_SESSION and S.snapshot.active
  end)
  wait_status('debug r1 · agent investigating')
  check(S.spinner_timer == nil, 'a spinner timer runs while the agent is idle')

  local context = hook('UserPromptSubmit', { prompt = 'Find the bug.' })
  check(context:find('[DEBUG MODE · round 1 · stage investigating]', 1, true), 'no blackboard for the model: ' .. context)
  wait_for('the turn state from the hook', function()
    return S.turn and S.turn.state == 'connecting'
  end)
  local s1 = check_status({ 'debug r1 · agent investigating · ', ' connecting…' })
  local frame = s1:match('investigating · (.-) connecting…')
  check(frame and vim.tbl_contains(require('debug_sidecar.format').spinner_frames, frame), 'no spinner frame in ' .. s1)
  check(S.spinner_timer ~= nil, 'no timer turns the spinner')
  -- The spinner turns.
  local s2
  vim.wait(1000, function()
    s2 = statusline()
    return s2 ~= s1
  end, 20)
  check(s2 ~= s1 and s2:find(' connecting…', 1, true), 'the spinner does not turn: ' .. s1 .. ' / ' .. s2)

  check(hook('PreToolUse', { tool_name = 'Edit', tool_input = { file_path = src } }) == '', 'PreToolUse answered')
  wait_for('working', function()
    return statusline():find(' working…', 1, true) ~= nil
  end)
  see('status line, the agent works (its hooks report from another process)', statusline())

  -- The agent hands the round over and stops: the turn ends.
  claude:request('debug/handOff', { mode = 'reproduce', steps = { 'Run `sh checkout.sh 5 5`.' } })
  check(hook('Stop', { stop_hook_active = false, last_assistant_message = 'Over to you.' }) == '', 'the Stop hook sent the agent back')
  wait_status('debug r1 · YOUR TURN (reproduce)')
  check(S.turn.state == 'idle', 'turn ' .. tostring(S.turn.state))
  check(S.spinner_timer == nil, 'the spinner timer still runs at idle')
  wait_note(from, vim.log.levels.WARN, { 'Debug round 1: your turn', '1. Run `sh checkout.sh 5 5`.' })

  -- The person's command acts on the session the status line shows.
  local from2 = #notes + 1
  vim.cmd('DebugAbort')
  wait_note(from2, vim.log.levels.INFO, { 'Debug session aborted.' })
  wait_status('debug: off')
  check(claude:request('debug/status').active == false, "the agent's session is still active")
  check(claude:close() == 0, "the agent's sidecar did not exit cleanly")
end)

case('a damaged saved state: the person is warned and the status line resets', function()
  vim.cmd('DebugStart The total is wrong for one item.')
  wait_status('debug r1 · agent investigating')
  local sid = S.snapshot.sessionId
  agent('debug/recordHypotheses', {
    hypotheses = { { id = 'H1', statement = 'One item skips the loop.', status = 'open' } },
  })
  wait_for('the hypothesis', function()
    return #(S.snapshot.hypotheses or {}) == 1
  end)
  local rev = S.snapshot.revision
  check(rev and rev > 1, 'revision ' .. tostring(rev))
  local from = #notes + 1
  write_file(ws .. '/.debug-sidecar/sessions/' .. sid .. '/state.json', '{"damaged')
  -- The server moves it aside and starts the session over (at a lower revision).
  wait_status('debug: off')
  local n = wait_note(from, vim.log.levels.WARN, { 'was damaged' })
  see('notification (WARN), the saved state was damaged', n.msg)
  -- A new session starts from revision 1 and is shown.
  vim.cmd('DebugStart After the damage.')
  wait_status('debug r1 · agent investigating')
  check(S.snapshot.problem == 'After the damage.', 'problem ' .. tostring(S.snapshot.problem))
  vim.cmd('DebugAbort')
  wait_status('debug: off')
end)

case('the sidecar crashes mid-session: the person is told; :DebugRestart restores the stage and hears the agent again', function()
  write_file(src, (ORIGINAL:gsub('%-gt 3', '-ge 3'))) -- no probe left from earlier cases
  vim.cmd('DebugStart The total is wrong for five items.')
  wait_status('debug r1 · agent investigating')
  insert_probe(agent('debug/probeSnippet', { file = 'checkout.sh', message = 'count', variables = { 'count' } }).snippet)
  agent_notify('turn/event', { kind = 'toolCall', tool = 'Edit' })
  agent('debug/handOff', { mode = 'reproduce', steps = { 'Run `sh checkout.sh 1 2 3 4 5`.' } })
  agent_notify('turn/event', { kind = 'turnEnd' })
  wait_status('debug r1 · YOUR TURN (reproduce) · 1 probe live')
  check(run_program('1', '2', '3', '4', '5') == '13', 'unexpected program output')
  vim.cmd('DebugLogs')
  wait_for('the log buffer on the new run', function()
    return log_buffer_text():find('run ' .. S.snapshot.runId, 1, true) ~= nil and S.logs.busy == false
  end)
  vim.cmd('close')

  local pid = server_pid()
  check(pid_alive(pid), 'no server process to kill')
  local from = #notes + 1
  -- It dies while a read of the run's log is on its way: a dead server never answers it.
  vim.cmd('DebugLogs')
  check(S.logs.busy, 'no log read in flight')
  vim.uv.kill(pid, 'sigkill')
  local n = wait_note(from, vim.log.levels.ERROR, { 'the sidecar stopped (killed by signal 9); run :DebugRestart' })
  see('notification (ERROR), the sidecar was killed', n.msg)
  -- Neovim's own warning comes too; ours is the one that says what to do.
  wait_note(from, vim.log.levels.WARN, { 'Client debug-sidecar quit with exit code 0 and signal 9' })
  check_status('debug: sidecar stopped, :DebugRestart')
  see('status line, the sidecar stopped', statusline())
  local from2 = #notes + 1
  vim.cmd('DebugProceed')
  wait_note(from2, vim.log.levels.ERROR, { 'the sidecar stopped', 'run :DebugRestart' })
  local from3 = #notes + 1
  vim.cmd('DebugRestart')
  local restarted = wait_note(from3, vim.log.levels.INFO, { 'debug-sidecar restarted: debug r1 · YOUR TURN (reproduce) · 1 probe live' })
  see('notification (INFO), :DebugRestart', restarted.msg)
  check(server_pid() ~= pid and pid_alive(server_pid()), 'no new server process')
  wait_status('debug r1 · YOUR TURN (reproduce) · 1 probe live')
  check(find_note(from3, vim.log.levels.WARN, { 'your turn' }) == nil, 'the same hand-off was announced again after the restart')
  -- The log buffer (its read was lost with the old process) works again.
  check(run_program('7', '7') == '14', 'unexpected program output')
  vim.cmd('DebugLogs')
  wait_for("the new run line in the log buffer", function()
    return log_buffer_text():find('"count":"2"', 1, true) ~= nil
  end)
  vim.cmd('close')

  -- The restarted sidecar hears the agent's process, as the first one did.
  vim.cmd('DebugProceed It printed 13.')
  wait_status('debug r2 · agent investigating · 1 probe live')
  agent('debug/handOff', { mode = 'reproduce', steps = { 'Run it once more.' } })
  local ok = vim.wait(TIMEOUT, function()
    return statusline() == 'debug r2 · YOUR TURN (reproduce) · 1 probe live'
  end, 10)
  check(
    ok,
    "after :DebugRestart the status line no longer follows the agent's process (status line "
      .. string.format('%q', statusline())
      .. '); a `serve` started on a workspace that already has .debug-sidecar/ announces no change made by another process'
  )
  wait_note(from3, vim.log.levels.WARN, { 'Debug round 2: your turn', '1. Run it once more.' })
  vim.cmd('DebugAbort')
  wait_note(from3, vim.log.levels.WARN, { 'Debug session aborted; probes are still in your files:' })
  wait_status('debug: off')
end)

case(':DebugRestart while the sidecar runs replaces it quietly', function()
  if S.snapshot and S.snapshot.active then -- left by a failed case
    vim.cmd('DebugAbort')
    wait_status('debug: off')
  end
  local old_pid = server_pid()
  local from = #notes + 1
  vim.cmd('DebugRestart')
  wait_note(from, vim.log.levels.INFO, { 'debug-sidecar restarted: no debug session is active' })
  wait_for('the old process to exit', function()
    return not pid_alive(old_pid)
  end)
  check(server_pid() ~= old_pid and pid_alive(server_pid()), 'no new server process')
  vim.wait(200)
  check(find_note(from, vim.log.levels.ERROR, { 'stopped' }) == nil, 'a restart was reported as a crash')
  check_status('debug: off')
end)

case('a clean stop leaves no process and no crash message', function()
  local pid = server_pid()
  local from = #notes + 1
  stop_and_wait()
  wait_for('the server process to exit', function()
    return not pid_alive(pid)
  end)
  vim.wait(200)
  check(find_note(from, vim.log.levels.ERROR, { 'stopped' }) == nil, 'a clean stop was reported as a crash')
  check_status('')
end)

---------------------------------------------------------------------------
-- run
---------------------------------------------------------------------------

local passed, failed = 0, 0
local started = vim.uv.hrtime()
for _, c in ipairs(cases) do
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(c.fn, debug.traceback)
  local ms = math.floor((vim.uv.hrtime() - t0) / 1e6)
  if ok then
    passed = passed + 1
    out(string.format('PASS %s (%d ms)', c.name, ms))
  else
    failed = failed + 1
    out(string.format('FAIL %s (%d ms)\n  %s', c.name, ms, tostring(err):gsub('\n', '\n  ')))
  end
end

-- Never leave a server running: the agent's processes exit on shutdown + exit.
for _, p in ipairs(peers) do
  local code = p:close()
  if code ~= 0 then
    out("FAIL cleanup: an agent's sidecar exited with " .. tostring(code))
    failed = failed + 1
  end
end
pcall(stop_and_wait)
local pid = server_pid()
if pid and pid_alive(pid) then
  vim.wait(2000, function()
    return not pid_alive(pid)
  end)
  if pid_alive(pid) then
    vim.uv.kill(pid, 'sigkill')
    out('FAIL cleanup: the server was still running after stop; killed')
    failed = failed + 1
  end
end
vim.fn.delete(tmp, 'rf')

if os.getenv('DEBUG_SIDECAR_NVIM_CAPTURE') == '1' or failed > 0 then
  out('\n== what the person sees (captured from this run)')
  out(table.concat(capture, '\n'))
  out('')
end
out(string.format('took %d ms', math.floor((vim.uv.hrtime() - started) / 1e6)))
out(string.format('nvim: %d passed, %d failed', passed, failed))
vim.cmd(failed > 0 and 'cquit 1' or 'qall!')
