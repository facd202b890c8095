-- debug-sidecar for Neovim 0.10+: runs `debug-sidecar serve` as an LSP client and gives the
-- person the debug session's commands, a status line and notifications.
local format = require('debug_sidecar.format')
local agents = require('debug_sidecar.agents')

local M = {}

local NAME = 'debug-sidecar'
local LOG_BUF_NAME = 'debug-sidecar://logs'

local defaults = {
  -- The server command; the binary is looked up on $PATH unless absolute.
  cmd = { 'debug-sidecar', 'serve' },
  -- A directory, or a function returning one; default: the nearest `.git` above the
  -- current buffer, else the current directory.
  root_dir = nil,
  -- initializationOptions: the agent session to follow and the state directory.
  session_id = nil,
  state_dir = nil,
  -- Extra environment for the server process.
  cmd_env = nil,
  -- Open the quickfix window after :DebugProbes.
  open_quickfix = true,
  -- How :DebugLogs and :DebugAgents open their buffers.
  log_split = 'botright split',
}

-- Everything the plugin knows; survives restarts of the server.
local S = {
  config = vim.deepcopy(defaults),
  heard = {}, -- sessionId -> revision of the last debug/stateChanged
  status = 'stopped', -- missing | starting | running | crashed | stopped
  client_id = nil,
  root = nil,
  snapshot = nil,
  turn = nil,
  bubble = nil,
  exit = nil, -- { code, signal } of the last unexpected stop
  stopping = {}, -- client ids stopped on purpose
  queued = {}, -- functions waiting for the server to be initialized
  notified_turn = nil, -- format.user_turn_key of the last "your turn" notification
  warned = nil, -- the last snapshot warning shown
  restarts = 0,
  restart_pending = false,
  aborting = false,
  -- gen grows whenever the buffer is reset or the server changes, so an answer to an older
  -- read (or one that never comes: a stopped server drops its pending answers) cannot
  -- leave the buffer stuck or append stale lines.
  logs = { buf = nil, run = nil, shown = {}, busy = false, again = false, again_cursor = nil, gen = 0 },
  spinner_timer = nil,
}
M._state = S

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = NAME })
end

local function obj(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

local has_011 = vim.fn.has('nvim-0.11') == 1

-- JSON null arrives as nil or as vim.NIL depending on the Neovim version; make it nil
-- everywhere so the rest of the plugin only checks for nil.
local function clean(v)
  if v == vim.NIL then
    return nil
  end
  if type(v) == 'table' then
    for k, x in pairs(v) do
      if x == vim.NIL then
        v[k] = nil
      elseif type(x) == 'table' then
        clean(x)
      end
    end
  end
  return v
end

local function client_call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function get_client()
  if not S.client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(S.client_id)
  if not client then
    return nil
  end
  if client_call(client, 'is_stopped') then
    return nil
  end
  return client
end

local function binary_name()
  return S.config.cmd[1]
end

local function missing_message()
  return string.format(
    'debug-sidecar: the sidecar binary `%s` was not found or is not executable. Install it '
      .. '(`cargo install --path .` in the debug-sidecar repository) or point the plugin at it: '
      .. "require('debug_sidecar').setup{ cmd = { '/path/to/debug-sidecar', 'serve' } }",
    binary_name()
  )
end

local function stopped_message()
  local e = S.exit or {}
  local how
  if e.signal and e.signal ~= 0 then
    how = 'killed by signal ' .. tostring(e.signal)
  else
    how = 'exit code ' .. tostring(e.code or '?')
  end
  return string.format('debug-sidecar: the sidecar stopped (%s); run :DebugRestart', how)
end

local function redraw()
  pcall(vim.cmd.redrawstatus, { bang = true })
end

-- A timer that redraws the status line while the agent is busy, so the spinner turns.
local function update_spinner()
  local busy = S.turn
    and S.turn.state
    and S.turn.state ~= 'idle'
    and S.status == 'running'
    and S.snapshot
    and S.snapshot.active
  if busy and not S.spinner_timer then
    S.spinner_timer = vim.uv.new_timer()
    S.spinner_timer:start(100, 100, vim.schedule_wrap(redraw))
  elseif not busy and S.spinner_timer then
    S.spinner_timer:stop()
    S.spinner_timer:close()
    S.spinner_timer = nil
  end
end

---------------------------------------------------------------------------
-- Logs buffer
---------------------------------------------------------------------------

local function log_buf_valid()
  return S.logs.buf and vim.api.nvim_buf_is_valid(S.logs.buf)
end

local function set_log_lines(start, lines)
  local buf = S.logs.buf
  -- Windows on the last line follow the end; one scrolled up to read stays where it is.
  local before = vim.api.nvim_buf_line_count(buf)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if start == 0 or vim.api.nvim_win_get_cursor(win)[1] >= before then
      following[#following + 1] = win
    end
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, start, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(following) do
    pcall(vim.api.nvim_win_set_cursor, win, { count, 0 })
  end
end

-- Forgets any read in flight (its answer is ignored when it comes).
local function forget_log_reads()
  S.logs.gen = S.logs.gen + 1
  S.logs.busy = false
  S.logs.again = false
  S.logs.again_cursor = nil
end

local function reset_logs(run)
  S.logs.run = run
  S.logs.shown = {}
  forget_log_reads()
  if log_buf_valid() then
    set_log_lines(0, format.log_header(S.snapshot, run))
  end
end

local request -- forward declaration

-- Reads the current run's log from `cursor` (nil: from its start), following nextCursor,
-- and appends the lines not shown yet.
local function fetch_logs(cursor)
  if not log_buf_valid() or not S.logs.run then
    return
  end
  if S.logs.busy then
    if not S.logs.again then
      S.logs.again = true
      S.logs.again_cursor = cursor
    elseif cursor == nil then
      S.logs.again_cursor = nil
    end
    return
  end
  S.logs.busy = true
  local run = S.logs.run
  local gen = S.logs.gen
  local function finish()
    if gen ~= S.logs.gen then
      return -- reset meanwhile: this read no longer owns the buffer
    end
    S.logs.busy = false
    if S.logs.again then
      local again_cursor = S.logs.again_cursor
      S.logs.again = false
      S.logs.again_cursor = nil
      fetch_logs(again_cursor)
    end
  end
  local function page(c)
    local params = { run = run, limit = 500, sessionId = S.snapshot and S.snapshot.sessionId }
    if c then
      params.cursor = c
    end
    request('debug/logs', params, function(result)
      if gen ~= S.logs.gen or run ~= S.logs.run or not log_buf_valid() then
        return finish()
      end
      local new = {}
      for _, e in ipairs(result.entries or {}) do
        if not S.logs.shown[e.line] then
          S.logs.shown[e.line] = true
          new[#new + 1] = format.log_line(e)
        end
      end
      if #new > 0 then
        set_log_lines(-1, new)
      end
      if result.nextCursor then
        page(result.nextCursor)
      else
        finish()
      end
    end, finish)
  end
  page(cursor)
end

local function on_log_appended(params)
  if not log_buf_valid() then
    return
  end
  if S.snapshot and params.sessionId and params.sessionId ~= S.snapshot.sessionId then
    return
  end
  if params.run ~= S.logs.run then
    if S.snapshot and params.run == S.snapshot.runId then
      reset_logs(params.run)
      return fetch_logs(nil)
    end
    return
  end
  fetch_logs(params.cursor)
end

---------------------------------------------------------------------------
-- State from the server
---------------------------------------------------------------------------

local fetch_activity -- forward declaration

--- Takes a snapshot from the server. `source`: 'notification' (debug/stateChanged),
--- 'fresh' (the first status read from a (re)started server, taken as it is) or nil (the
--- answer to a request). The server sends notifications in the order the changes happened,
--- but an answer can overtake the notifications of earlier changes, so a notification
--- older than what is shown is dropped, unless the notifications themselves went back
--- (the session was reset: its saved state was damaged and moved aside, or deleted) or it
--- carries a warning about the saved state.
local function apply_snapshot(snap, source)
  if type(snap) ~= 'table' or snap.sessionId == nil then
    return
  end
  local prev = S.snapshot
  local rev = snap.revision or 0
  local heard = S.heard[snap.sessionId]
  if source == 'notification' then
    S.heard[snap.sessionId] = rev
  end
  local older = prev and prev.sessionId == snap.sessionId and rev < (prev.revision or 0)
  if older and source == nil then
    return -- an answer older than a change already heard
  end
  if older and source == 'notification' and not snap.warning and not (heard and rev < heard) then
    return -- a notification overtaken by an answer
  end
  if S.config.session_id and snap.sessionId ~= S.config.session_id then
    return -- another agent session of this workspace
  end
  if prev and prev.active and prev.sessionId ~= snap.sessionId and not snap.active then
    return -- another session of this workspace is idle; keep following the active one
  end
  S.snapshot = snap
  if prev and prev.sessionId ~= snap.sessionId then
    -- Now following another session (an agent started its own): its turn and progress.
    S.turn, S.bubble = nil, nil
    fetch_activity(snap.sessionId)
  end

  if snap.warning and snap.warning ~= S.warned then
    S.warned = snap.warning
    notify('debug-sidecar: ' .. snap.warning, vim.log.levels.WARN)
  end

  local key = format.user_turn_key(snap)
  if key and key ~= S.notified_turn then
    S.notified_turn = key
    notify(format.user_turn_message(snap), vim.log.levels.WARN)
  elseif not key then
    -- The round moved on: a later hand-off with the same steps is news again.
    S.notified_turn = nil
  end

  if prev and prev.active and not snap.active and not S.aborting then
    notify('Debug session ended.')
  end

  if log_buf_valid() and snap.active and snap.runId and snap.runId ~= S.logs.run then
    reset_logs(snap.runId)
    fetch_logs(nil)
  end
  update_spinner()
  redraw()
end

local function follows(session_id)
  return not (S.snapshot and session_id and session_id ~= S.snapshot.sessionId)
end

local handlers = {
  ['debug/stateChanged'] = function(_, params)
    apply_snapshot(clean(params), 'notification')
  end,
  ['turn/stateChanged'] = function(_, params)
    params = clean(params)
    if params and follows(params.sessionId) then
      S.turn = { state = params.state, label = params.label }
      update_spinner()
      redraw()
    end
  end,
  ['progress/changed'] = function(_, params)
    params = clean(params)
    if params and follows(params.sessionId) then
      S.bubble = params.bubble
      redraw()
    end
  end,
  ['debug/logAppended'] = function(_, params)
    params = clean(params)
    if params then
      on_log_appended(params)
    end
  end,
  ['agents/changed'] = function(_, params)
    agents.changed(clean(params))
  end,
  -- The agent was woken (or its chat went on first) for a command given here.
  ['debug/wakeChanged'] = function(_, params)
    params = clean(params)
    if params and S.wake_asked and params.revision == S.wake_asked then
      S.wake_asked = nil
      notify(params.message)
    end
  end,
}

---------------------------------------------------------------------------
-- Requests
---------------------------------------------------------------------------

--- Sends a request; on an error shows the server's message (and calls on_error).
request = function(method, params, on_result, on_error)
  local function run()
    local client = get_client()
    if not client then
      if S.status == 'missing' then
        notify(missing_message(), vim.log.levels.ERROR)
      elseif S.status == 'crashed' then
        notify(stopped_message(), vim.log.levels.ERROR)
      else
        notify('debug-sidecar is not running; run :DebugRestart', vim.log.levels.ERROR)
      end
      if on_error then
        on_error()
      end
      return
    end
    local function handler(err, result)
      err, result = clean(err), clean(result)
      if err then
        notify('debug-sidecar: ' .. tostring(err.message or err), vim.log.levels.ERROR)
        if on_error then
          on_error(err)
        end
        return
      end
      if on_result then
        on_result(result)
      end
    end
    local ok = client_call(client, 'request', method, obj(params), function(err, result)
      if vim.in_fast_event() then
        vim.schedule(function()
          handler(err, result)
        end)
      else
        handler(err, result)
      end
    end)
    if not ok then
      notify('debug-sidecar: could not send ' .. method .. '; run :DebugRestart', vim.log.levels.ERROR)
      if on_error then
        on_error()
      end
    end
  end
  if S.status == 'starting' then
    table.insert(S.queued, run)
  else
    run()
  end
end
M.request = request

-- The turn state and progress of a session (nil: the one the server resolves).
fetch_activity = function(session_id)
  local params = { sessionId = session_id }
  request('turn/state', params, function(t)
    if t and follows(t.sessionId) then
      S.turn = { state = t.state, label = t.label }
      update_spinner()
      redraw()
    end
  end)
  request('progress/state', params, function(b)
    if session_id == nil or follows(session_id) then
      S.bubble = b
      redraw()
    end
  end)
end

--- Re-reads the session's state. `fresh`: the server was just (re)started, so its answer
--- replaces whatever the plugin remembered.
local function refresh(after, fresh)
  request('debug/status', {}, function(snap)
    apply_snapshot(snap, fresh and 'fresh' or nil)
    if after then
      after()
    end
  end)
  fetch_activity(nil)
  request('agents/list', {}, agents.listed)
end
M.refresh = refresh

---------------------------------------------------------------------------
-- The server process
---------------------------------------------------------------------------

local function resolve_root()
  local r = S.config.root_dir
  if type(r) == 'function' then
    r = r()
  end
  if not r then
    r = vim.fs.root(0, '.git') or vim.fn.getcwd()
  end
  return (vim.fs.normalize(vim.fn.fnamemodify(r, ':p')):gsub('(.)/$', '%1'))
end

local function start()
  local cmd = S.config.cmd
  if vim.fn.executable(cmd[1]) ~= 1 then
    S.status = 'missing'
    S.client_id = nil
    notify(missing_message(), vim.log.levels.ERROR)
    redraw()
    return false
  end
  S.root = resolve_root()
  local init_options = {}
  if S.config.session_id then
    init_options.sessionId = S.config.session_id
  end
  if S.config.state_dir then
    init_options.stateDir = S.config.state_dir
  end
  S.status = 'starting'
  S.queued = {}
  local config = {
    name = NAME,
    cmd = cmd,
    cmd_cwd = S.root,
    cmd_env = S.config.cmd_env,
    root_dir = S.root,
    workspace_folders = { { name = vim.fs.basename(S.root), uri = vim.uri_from_fname(S.root) } },
    init_options = obj(init_options),
    handlers = handlers,
    on_init = function(client, result)
      result = clean(result)
      if client.id ~= S.client_id and S.client_id ~= nil then
        return
      end
      local caps = result and result.capabilities or {}
      local ds = caps.experimental and caps.experimental.debugSidecar
      if not ds or ds.protocolVersion ~= 1 then
        notify(
          'debug-sidecar: the server does not speak protocol v1 (is `'
            .. cmd[1]
            .. '` the debug-sidecar binary?)',
          vim.log.levels.WARN
        )
      end
      S.status = 'running'
      S.exit = nil
      local queued = S.queued
      S.queued = {}
      local restarted = S.restarts > 0 and S.restart_pending
      S.restart_pending = false
      refresh(function()
        if restarted then
          local snap = S.snapshot or {}
          local where = snap.active and format.statusline(M._view(), nil) or 'no debug session is active'
          notify('debug-sidecar restarted: ' .. where)
        end
      end, true)
      for _, f in ipairs(queued) do
        f()
      end
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        if S.stopping[client_id] then
          S.stopping[client_id] = nil
          return
        end
        if client_id ~= S.client_id then
          return
        end
        S.status = 'crashed'
        S.exit = { code = code, signal = signal }
        S.turn = nil
        S.bubble = nil
        -- A stopped server never answers what was pending.
        forget_log_reads()
        S.aborting = false
        update_spinner()
        -- Requests that waited for a server that never came up are dropped: the person
        -- is told once, here.
        S.queued = {}
        notify(stopped_message(), vim.log.levels.ERROR)
        redraw()
      end)
    end,
  }
  local id
  if has_011 then
    id = vim.lsp.start(config, { attach = false, reuse_client = function() return false end })
  else
    id = vim.lsp.start_client(config)
  end
  if not id then
    S.status = 'missing'
    notify(missing_message(), vim.log.levels.ERROR)
    redraw()
    return false
  end
  S.client_id = id
  redraw()
  return true
end

local function stop_client()
  local client = S.client_id and vim.lsp.get_client_by_id(S.client_id)
  if client then
    S.stopping[client.id] = true
    client_call(client, 'stop')
  end
  S.client_id = nil
  S.status = 'stopped'
  S.turn = nil
  S.bubble = nil
  forget_log_reads()
  S.aborting = false
  update_spinner()
end

--- Stops the server (shutdown + exit); returns the id of the client being stopped.
function M.stop()
  local id = S.client_id
  stop_client()
  redraw()
  return id
end

--- Starts a new server (stopping a running one) and re-reads the session's state.
function M.restart()
  stop_client()
  S.restarts = S.restarts + 1
  S.restart_pending = true
  return start()
end

---------------------------------------------------------------------------
-- Commands
---------------------------------------------------------------------------

-- The person's commands act on the session the status line shows, even when the server
-- would pick another one by itself (several agent sessions in one workspace).
local function for_shown(params)
  params = params or {}
  if S.snapshot and S.snapshot.sessionId then
    params.sessionId = S.snapshot.sessionId
  end
  return params
end

local function note_params(note)
  if note and note ~= '' then
    return for_shown({ note = note })
  end
  return for_shown({})
end

function M.start_session(problem)
  local function go(p)
    if not p or vim.trim(p) == '' then
      notify('debug-sidecar: no problem given; nothing started', vim.log.levels.WARN)
      return
    end
    request('debug/start', { problem = vim.trim(p) }, function(snap)
      apply_snapshot(snap)
      notify(string.format('Debug session started (round %s). The agent investigates; you will be told when it is your turn.', tostring(snap.round)))
    end)
  end
  if problem and vim.trim(problem) ~= '' then
    go(problem)
  else
    vim.ui.input({ prompt = 'Debug: what is the problem? ' }, go)
  end
end

--- The sidecar's line on waking the agent after a command given here.
local function tell_wake(snap)
  local wake = clean(snap.wake)
  if not wake then
    return
  end
  S.wake_asked = wake.state == 'waiting' and wake.revision or nil
  notify(wake.message)
end

function M.proceed(note)
  request('debug/proceed', note_params(note), function(snap)
    apply_snapshot(snap)
    notify(string.format('Round %s is the agent\'s now: it reads the evidence.', tostring(snap.round)))
    tell_wake(snap)
  end)
end

function M.done(note)
  request('debug/done', note_params(note), function(snap)
    apply_snapshot(snap)
    if snap.active then
      notify('Marked fixed: the agent is cleaning up its probes.')
    end
    tell_wake(snap)
  end)
end

--- The person marks this moment of the run ("it froze right after Save"): a marker
--- record with their words; the agent's summary lists it by line.
function M.mark(words)
  request('debug/mark', for_shown({ words = words or '' }), function(result)
    notify(result.message)
  end)
end

function M.abort()
  S.aborting = true
  request('debug/abort', for_shown({}), function(result)
    apply_snapshot(result.snapshot)
    S.aborting = false
    local left = result.leftoverProbes or {}
    if #left > 0 then
      notify(format.leftover_message(left), vim.log.levels.WARN)
    else
      notify('Debug session aborted.')
    end
  end, function()
    S.aborting = false
  end)
end

function M.probes()
  request('debug/probes', for_shown({ rescan = true }), function(result)
    local items = format.probe_items(result, S.snapshot, S.root)
    vim.fn.setqflist({}, ' ', { title = format.probes_title(result), items = items })
    if #items == 0 then
      notify('debug-sidecar: no probes in the ledger')
    elseif S.config.open_quickfix then
      vim.cmd('botright copen')
    end
  end)
end

function M.logs()
  if not get_client() then
    return request('debug/logs', {}) -- reports why nothing can be read
  end
  local buf = S.logs.buf
  if not log_buf_valid() then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, LOG_BUF_NAME)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = 'debugsidecarlog'
    vim.bo[buf].modifiable = false
    S.logs.buf = buf
    S.logs.run = nil
  end
  if #vim.fn.win_findbuf(buf) == 0 then
    vim.cmd(S.config.log_split)
    vim.api.nvim_win_set_buf(0, buf)
  end
  local run = S.snapshot and S.snapshot.runId
  if not run then
    S.logs.run = nil
    set_log_lines(0, { 'debug-sidecar: no debug session is active, so there is no run log.' })
    return
  end
  if run ~= S.logs.run then
    reset_logs(run)
  end
  fetch_logs(nil)
end

function M.agents()
  if not get_client() then
    return request('agents/list', {}) -- reports why nothing can be read
  end
  agents.open(S.config.log_split)
  request('agents/list', {}, agents.listed)
end

function M._view()
  return { status = S.status, snapshot = S.snapshot, turn = S.turn, bubble = S.bubble }
end

--- The status line text, e.g. `debug r1 · YOUR TURN (reproduce) · 1 probe live`.
function M.statusline()
  return format.statusline(M._view(), format.spinner(vim.uv.now()))
end

local function define_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('DebugStart', function(a)
    M.start_session(a.args)
  end, { nargs = '*', desc = 'debug-sidecar: start a debug session for a problem' })
  cmd('DebugProceed', function(a)
    M.proceed(a.args)
  end, { nargs = '*', desc = 'debug-sidecar: I reproduced it; hand the round back to the agent' })
  cmd('DebugDone', function(a)
    M.done(a.args)
  end, { nargs = '*', desc = 'debug-sidecar: the bug is fixed; the agent cleans up' })
  cmd('DebugMark', function(a)
    M.mark(a.args)
  end, { nargs = '*', desc = 'debug-sidecar: mark this moment of the run, with what you saw' })
  cmd('DebugAbort', function()
    M.abort()
  end, { nargs = 0, desc = 'debug-sidecar: abort the debug session' })
  cmd('DebugProbes', function()
    M.probes()
  end, { nargs = 0, desc = 'debug-sidecar: the probes, in the quickfix list' })
  cmd('DebugLogs', function()
    M.logs()
  end, { nargs = 0, desc = "debug-sidecar: the current run's log lines" })
  cmd('DebugAgents', function()
    M.agents()
  end, { nargs = 0, desc = "debug-sidecar: the agent's subagents" })
  cmd('DebugRestart', function()
    M.restart()
  end, { nargs = 0, desc = 'debug-sidecar: start the sidecar again' })
end

function M.setup(opts)
  S.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if type(S.config.cmd) == 'string' then
    S.config.cmd = { S.config.cmd, 'serve' }
  end
  define_commands()
  local group = vim.api.nvim_create_augroup('debug_sidecar', { clear = true })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = group,
    callback = function()
      stop_client()
    end,
  })
  if get_client() then
    stop_client()
  end
  return start()
end

return M
