-- A second `debug-sidecar serve` on the test's workspace, playing the agent the way an
-- agent's own sidecar process does (its MCP server, another editor): a separate process
-- that shares the session with the plugin's sidecar only through the workspace's state
-- directory. LSP base framing over the process's stdio.
local Peer = {}
Peer.__index = Peer

--- opts: { timeout = ms, init_options = table|nil }
function Peer.start(bin, cwd, opts)
  local self = setmetatable({
    buf = '',
    answers = {},
    heard = {},
    next_id = 0,
    stderr = {},
    exited = nil,
    broken = nil,
    timeout = opts.timeout or 10000,
  }, Peer)
  self.proc = vim.system({ bin, 'serve' }, {
    cwd = cwd,
    stdin = true,
    stdout = function(_, data)
      if data then
        self:_feed(data)
      end
    end,
    stderr = function(_, data)
      if data then
        self.stderr[#self.stderr + 1] = data
      end
    end,
  }, function(result)
    self.exited = result
  end)
  local init = self:request('initialize', {
    processId = vim.NIL,
    rootUri = vim.uri_from_fname(cwd),
    capabilities = vim.empty_dict(),
    initializationOptions = opts.init_options,
  })
  assert(init.capabilities.experimental.debugSidecar.protocolVersion == 1, 'not protocol v1')
  self:notify('initialized', vim.empty_dict())
  return self
end

-- Runs in a libuv callback: plain string work and vim.json only.
function Peer:_feed(data)
  self.buf = self.buf .. data
  while true do
    local head_end = self.buf:find('\r\n\r\n', 1, true)
    if not head_end then
      return
    end
    local len = tonumber(self.buf:sub(1, head_end):match('[Cc]ontent%-[Ll]ength:%s*(%d+)'))
    if not len then
      self.broken = 'a header without Content-Length: ' .. self.buf:sub(1, head_end)
      self.buf = ''
      return
    end
    local body_start = head_end + 4
    if #self.buf < body_start + len - 1 then
      return
    end
    local body = self.buf:sub(body_start, body_start + len - 1)
    self.buf = self.buf:sub(body_start + len)
    local ok, msg = pcall(vim.json.decode, body)
    if not ok then
      self.broken = 'a body that is not JSON: ' .. body
    elseif msg.id ~= nil and msg.method == nil then
      self.answers[msg.id] = msg
    else
      self.heard[#self.heard + 1] = msg
    end
  end
end

function Peer:_send(msg)
  local body = vim.json.encode(msg)
  self.proc:write(string.format('Content-Length: %d\r\n\r\n%s', #body, body))
end

function Peer:notify(method, params)
  self:_send({ jsonrpc = '2.0', method = method, params = params })
end

--- A request, waited for; raises on an error answer, a timeout or an exit.
function Peer:request(method, params)
  self.next_id = self.next_id + 1
  local id = self.next_id
  self:_send({ jsonrpc = '2.0', id = id, method = method, params = params })
  vim.wait(self.timeout, function()
    return self.answers[id] ~= nil or self.exited ~= nil or self.broken ~= nil
  end, 5)
  local a = self.answers[id]
  if not a then
    error(
      string.format(
        "the agent's sidecar did not answer %s (%s)\n%s",
        method,
        self.broken or (self.exited and ('it exited with ' .. tostring(self.exited.code)) or 'timed out'),
        table.concat(self.stderr)
      ),
      2
    )
  end
  self.answers[id] = nil
  if a.error then
    error(method .. ' failed: ' .. vim.inspect(a.error), 2)
  end
  return a.result
end

--- shutdown + exit; returns the exit code (nil if it had to be killed).
function Peer:close()
  if not self.exited then
    pcall(self.request, self, 'shutdown')
    pcall(self.notify, self, 'exit')
    pcall(self.proc.write, self.proc, nil)
    vim.wait(3000, function()
      return self.exited ~= nil
    end, 5)
    if not self.exited then
      self.proc:kill('sigkill')
      self.proc:wait(1000)
      return nil
    end
  end
  return self.exited.code
end

return Peer
