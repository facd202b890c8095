-- The Subagents buffer (:DebugAgents): the subagent records of the session the sidecar
-- resolves (`agents/list`), kept current by `agents/changed`, in the order they first
-- appeared. The records are kept whether or not the buffer is shown.
local format = require('debug_sidecar.format')

local M = {}

local BUF_NAME = 'debug-sidecar://subagents'

local A = { buf = nil, session = nil, records = {} }
M._state = A

local function valid()
  return A.buf ~= nil and vim.api.nvim_buf_is_valid(A.buf)
end

local function render()
  if not valid() then
    return
  end
  vim.bo[A.buf].modifiable = true
  vim.api.nvim_buf_set_lines(A.buf, 0, -1, false, format.agent_lines(A.records))
  vim.bo[A.buf].modifiable = false
  vim.bo[A.buf].modified = false
end

--- An `agents/list` answer: the session followed and its records.
function M.listed(result)
  if type(result) ~= 'table' then
    return
  end
  A.session = result.sessionId
  A.records = type(result.agents) == 'table' and result.agents or {}
  render()
end

--- An `agents/changed` notification: the record replaces the one of its id, or is added.
function M.changed(params)
  if type(params) ~= 'table' or type(params.record) ~= 'table' then
    return
  end
  if A.session == nil then
    A.session = params.sessionId
  end
  if params.sessionId ~= A.session then
    return
  end
  for i, r in ipairs(A.records) do
    if r.id == params.record.id then
      A.records[i] = params.record
      return render()
    end
  end
  A.records[#A.records + 1] = params.record
  render()
end

--- Shows the buffer (opened with `split` when no window shows it).
function M.open(split)
  if not valid() then
    A.buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(A.buf, BUF_NAME)
    vim.bo[A.buf].buftype = 'nofile'
    vim.bo[A.buf].bufhidden = 'hide'
    vim.bo[A.buf].swapfile = false
    vim.bo[A.buf].filetype = 'debugsidecaragents'
  end
  render()
  if #vim.fn.win_findbuf(A.buf) == 0 then
    vim.cmd(split)
    vim.api.nvim_win_set_buf(0, A.buf)
  end
end

--- The buffer's text ('' when it does not exist).
function M.text()
  if not valid() then
    return ''
  end
  return table.concat(vim.api.nvim_buf_get_lines(A.buf, 0, -1, false), '\n')
end

return M
