//! `debug-sidecar acp`: the real binary between a scripted ACP editor (this
//! test) and a scripted ACP agent (tests/support/fake_acp_agent.py), each
//! side asserting on what the other really received.

mod support;

use debug_sidecar::core::text::{ACP_BOARD_OPEN, NUDGE_NOTICE};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use support::{Workspace, BIN};

const WAIT: Duration = Duration::from_secs(20);

struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    log: PathBuf,
    root: PathBuf,
    /// Every message the editor was sent, in order.
    seen: Vec<Value>,
}

fn fake_agent() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/support/fake_acp_agent.py"
    )
    .to_string()
}

impl Editor {
    fn start(ws: &Workspace, nudges: u32) -> Editor {
        std::fs::create_dir_all(ws.root.join(".git")).unwrap();
        let log = ws.root.join(".git/fake-acp.jsonl");
        let mut child = Command::new(BIN)
            .args(["acp", "--nudges", &nudges.to_string(), "--", "python3"])
            .arg(fake_agent())
            .current_dir(&ws.root)
            .env("FAKE_ACP_LOG", &log)
            .env_remove("DEBUG_SIDECAR_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| json!({ "notJson": line }));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Editor {
            stdin: child.stdin.take(),
            child,
            lines,
            log,
            root: ws.root.clone(),
            seen: Vec::new(),
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Messages until one matches `done` (included); panics after WAIT.
    fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let message = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("nothing matching came; got {got:#?}"));
            self.seen.push(message.clone());
            got.push(message.clone());
            if done(&message) {
                return got;
            }
        }
    }

    /// A request and everything up to its answer.
    fn request(&mut self, id: Value, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut got = self.until(|m| m["id"] == id && m.get("method").is_none());
        let answer = got.pop().unwrap();
        (answer, got)
    }

    fn open_session(&mut self) -> Vec<Value> {
        let (init, _) = self.request(json!(0), "initialize", json!({"protocolVersion": 1}));
        assert_eq!(init["result"]["protocolVersion"], 1);
        let cwd = self.root.to_string_lossy().into_owned();
        let (new, _) = self.request(
            json!(1),
            "session/new",
            json!({"cwd": cwd, "mcpServers": []}),
        );
        assert_eq!(new["result"]["sessionId"], "s1");
        // Ours follow the answer; the agent's own list comes after it.
        let mut updates = self.until(is_commands_update);
        updates.extend(self.until(is_commands_update));
        updates
    }

    fn prompt(&mut self, id: u64, text: &str) -> (Value, Vec<Value>) {
        self.request(
            json!(id),
            "session/prompt",
            json!({"sessionId": "s1", "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// What the agent received, in order.
    fn agent_log(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn agent_prompts(&self) -> Vec<Value> {
        self.agent_log()
            .into_iter()
            .filter(|m| m["method"] == "session/prompt")
            .collect()
    }

    fn sidecar(&self, args: &[&str]) -> String {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&self.root)
            .env_remove("DEBUG_SIDECAR_DIR")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn status(&self) -> Value {
        let listed: Value = serde_json::from_str(&self.sidecar(&["status", "--json"])).unwrap();
        listed
            .as_array()
            .and_then(|all| all.first().cloned())
            .unwrap_or(listed)
    }

    /// Closes the editor's side and waits for the proxy.
    fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        wait(&mut self.child)
    }
}

fn wait(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().ok();
    panic!("the proxy did not exit");
}

fn is_commands_update(m: &Value) -> bool {
    m["params"]["update"]["sessionUpdate"] == "available_commands_update"
}

fn chunks(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .map(str::to_string)
        .collect()
}

fn prompt_text(prompt: &Value) -> Vec<String> {
    prompt["params"]["prompt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn names(update: &Value) -> Vec<String> {
    update["params"]["update"]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ids_are_remapped_and_unknown_messages_pass_both_ways() {
    let ws = Workspace::new("acp-ids");
    let mut editor = Editor::start(&ws, 3);
    let (init, _) = editor.request(
        json!("init-a"),
        "initialize",
        json!({"protocolVersion": 1, "_meta": {"editor": "x"}}),
    );
    assert_eq!(init["id"], "init-a");
    assert_eq!(init["result"]["agentInfo"]["name"], "fake-agent");
    // An unknown method with an id the proxy's own ids could collide with.
    let (echo, _) = editor.request(json!(1), "_zed/custom", json!({"_meta": {"k": [1]}}));
    assert_eq!(echo["result"]["echo"], "_zed/custom");
    editor.send_raw("this is not json");
    editor.request(json!(2), "_zed/after", json!({}));
    let log = editor.agent_log();
    assert!(log.iter().any(|m| m["notJson"] == "this is not json"));
    let received: Vec<&Value> = log.iter().filter(|m| m.get("method").is_some()).collect();
    assert_eq!(received[0]["method"], "initialize");
    assert_eq!(received[0]["params"]["_meta"]["editor"], "x");
    assert!(received[0]["id"].is_u64(), "the agent sees the proxy's ids");
    assert_eq!(received[1]["params"]["_meta"]["k"], json!([1]));
    assert_ne!(received[0]["id"], received[1]["id"]);
    editor.close();
}

#[test]
fn a_session_gets_our_mcp_server_and_our_commands_beside_the_agents() {
    let ws = Workspace::new("acp-new");
    let mut editor = Editor::start(&ws, 3);
    let updates = editor.open_session();
    // Offered alone before the agent lists any, then merged into its list.
    assert_eq!(
        names(&updates[0]),
        ["debug", "debug-proceed", "debug-done", "debug-abort"]
    );
    let last = updates
        .iter()
        .rev()
        .find(|m| is_commands_update(m))
        .unwrap();
    assert_eq!(
        names(last),
        [
            "review",
            "debug",
            "debug-proceed",
            "debug-done",
            "debug-abort"
        ]
    );
    let new = editor
        .agent_log()
        .into_iter()
        .find(|m| m["method"] == "session/new")
        .unwrap();
    let servers = new["params"]["mcpServers"].as_array().unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0]["name"], "debug-sidecar");
    assert_eq!(servers[0]["args"], json!(["mcp"]));
    let program = PathBuf::from(servers[0]["command"].as_str().unwrap());
    assert_eq!(
        program.canonicalize().unwrap(),
        Path::new(BIN).canonicalize().unwrap()
    );
    editor.close();
}

#[test]
fn the_board_rides_after_the_persons_text_once_per_change() {
    let ws = Workspace::new("acp-board");
    let mut editor = Editor::start(&ws, 0);
    editor.open_session();
    // No session yet: the prompt goes through as the person wrote it.
    editor.prompt(2, "hello");
    editor.sidecar(&["start", "the total ignores the discount"]);
    editor.prompt(3, "/review the diff");
    editor.prompt(4, "and now?");
    let prompts = editor.agent_prompts();
    assert_eq!(prompt_text(&prompts[0]), ["hello"]);
    let slash = prompt_text(&prompts[1]);
    assert_eq!(slash[0], "/review the diff", "a slash command stays first");
    assert_eq!(slash.len(), 2);
    assert!(slash[1].starts_with(ACP_BOARD_OPEN), "{}", slash[1]);
    assert!(slash[1].contains("[DEBUG MODE · round 1 · stage investigating]"));
    assert!(slash[1].len() <= debug_sidecar::core::text::ACP_BOARD_MAX);
    // The conversation holds this copy already.
    assert_eq!(prompt_text(&prompts[2]), ["and now?"]);
    editor.close();
}

#[test]
fn our_commands_are_answered_here_and_the_kickoff_goes_to_the_agent() {
    let ws = Workspace::new("acp-commands");
    let mut editor = Editor::start(&ws, 3);
    editor.open_session();
    let (answer, shown) = editor.prompt(2, "/debug SCRIPT:handoff the total ignores the discount");
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    let said = chunks(&shown);
    assert!(
        said[0].starts_with("debug-sidecar: Debug Mode started"),
        "{said:?}"
    );
    let prompts = editor.agent_prompts();
    assert_eq!(prompts.len(), 1, "a hand-off is not sent back");
    let kickoff = prompt_text(&prompts[0]).join("\n");
    assert!(
        !kickoff.starts_with("/debug"),
        "the command is not forwarded as text"
    );
    assert!(kickoff.contains("the total ignores the discount"));
    assert!(kickoff.contains(ACP_BOARD_OPEN));
    let status = editor.status();
    assert_eq!(status["stage"], "user_turn", "{status:#}");
    // The person's Proceed: answered here, round 2 is the agent's.
    let (_, shown) = editor.prompt(3, "/debug-proceed SCRIPT:handoff it said 30");
    assert!(
        chunks(&shown)[0].contains("round 2 is the agent's"),
        "{shown:#?}"
    );
    let status = editor.status();
    assert_eq!(status["round"], 2);
    let proceed = prompt_text(&editor.agent_prompts()[1]).join("\n");
    assert!(proceed.contains("it said 30"), "{proceed}");
    // An illegal command is said to the person; the agent hears nothing.
    let before = editor.agent_prompts().len();
    let (answer, shown) = editor.prompt(4, "/debug again");
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert!(
        chunks(&shown)[0].starts_with("debug-sidecar: "),
        "{shown:#?}"
    );
    assert_eq!(editor.agent_prompts().len(), before);
    editor.close();
}

#[test]
fn a_stubborn_agent_is_sent_back_within_the_rounds_budget() {
    let ws = Workspace::new("acp-stubborn");
    let mut editor = Editor::start(&ws, 3);
    editor.open_session();
    editor.sidecar(&["start", "the total ignores the discount"]);
    let (answer, shown) = editor.prompt(2, "SCRIPT:stubborn fix it");
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    let prompts = editor.agent_prompts();
    // The person's prompt and the round's two nudges; then the round closes.
    assert_eq!(prompts.len(), 3, "{prompts:#?}");
    let said = chunks(&shown);
    let sent_back = said.iter().filter(|s| s.contains(NUDGE_NOTICE)).count();
    assert_eq!(sent_back, 2, "{said:?}");
    assert!(prompt_text(&prompts[1])[0].contains("hand_off_to_user"));
    // Exactly one answer reached the editor for its prompt.
    let answers = editor.seen.iter().filter(|m| m["id"] == 2).count();
    assert_eq!(answers, 1);
    assert_eq!(editor.status()["stage"], "user_turn");
    editor.close();
}

#[test]
fn the_proxys_own_budget_caps_follow_ups() {
    let ws = Workspace::new("acp-budget");
    let mut editor = Editor::start(&ws, 1);
    editor.open_session();
    editor.sidecar(&["start", "the total ignores the discount"]);
    editor.prompt(2, "SCRIPT:stubborn fix it");
    assert_eq!(editor.agent_prompts().len(), 2);
    editor.close();
}

#[test]
fn a_cancel_during_a_follow_up_ends_the_editors_prompt() {
    let ws = Workspace::new("acp-cancel");
    let mut editor = Editor::start(&ws, 3);
    editor.open_session();
    editor.sidecar(&["start", "the total ignores the discount"]);
    editor.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "SCRIPT:slow go"}]}}),
    );
    editor.until(|m| {
        m["params"]["update"]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(NUDGE_NOTICE))
    });
    // A request cancel names the editor's id; the agent hears the id it
    // knows, the follow-up's now carrying the editor's prompt.
    editor
        .send(json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}}));
    editor
        .send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}));
    let got = editor.until(|m| m["id"] == 2);
    let follow_up = editor.agent_prompts()[1]["id"].clone();
    let log = editor.agent_log();
    let cancel = log.iter().find(|m| m["method"] == "$/cancel_request");
    assert_eq!(cancel.unwrap()["params"]["requestId"], follow_up);
    assert_eq!(got.last().unwrap()["result"]["stopReason"], "cancelled");
    assert_eq!(
        editor.agent_prompts().len(),
        2,
        "no follow-up after a cancel"
    );
    editor.close();
}

#[test]
fn permission_requests_and_agent_requests_pass_through_with_their_ids() {
    let ws = Workspace::new("acp-permission");
    let mut editor = Editor::start(&ws, 0);
    editor.open_session();
    editor.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "SCRIPT:permission"}]}}),
    );
    let got = editor.until(|m| m["method"] == "session/request_permission");
    let ask = got.last().unwrap().clone();
    assert_eq!(ask["id"], 101, "the agent's own id");
    editor.send(json!({"jsonrpc": "2.0", "id": 101,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}));
    let got = editor.until(|m| m["id"] == 2 && m.get("method").is_none());
    assert_eq!(got.last().unwrap()["result"]["stopReason"], "end_turn");
    let answer = editor
        .agent_log()
        .into_iter()
        .find(|m| m["id"] == 101)
        .unwrap();
    assert_eq!(answer["result"]["outcome"]["optionId"], "allow");
    // An unknown notification and an fs request reach the editor untouched.
    editor.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "SCRIPT:extras"}]}}),
    );
    let got = editor.until(|m| m["id"] == 3 && m.get("method").is_none());
    let custom = got.iter().find(|m| m["method"] == "_fake/custom").unwrap();
    assert_eq!(custom["params"]["_meta"]["fake"], true);
    assert!(got.iter().any(|m| m["method"] == "fs/read_text_file"));
    editor.close();
}

#[test]
fn turn_states_and_progress_come_from_the_updates() {
    let ws = Workspace::new("acp-turns");
    std::fs::create_dir_all(ws.root.join(".git")).unwrap();
    let mut serve = support::initialized(&ws.root);
    let mut editor = Editor::start(&ws, 0);
    editor.open_session();
    editor.sidecar(&["start", "the total ignores the discount"]);
    serve.drain(support::QUIET);
    editor.prompt(2, "SCRIPT:stubborn look");
    let mut states = Vec::new();
    while let Some(message) = serve.next_message(support::QUIET * 20) {
        if message["method"] == "turn/stateChanged" {
            let state = message["params"]["state"].as_str().unwrap().to_string();
            if states.last() != Some(&state) {
                states.push(state);
            }
            if states.last().map(String::as_str) == Some("idle") {
                break;
            }
        }
    }
    // The prompt, the thought, the edit, the message, the end.
    assert_eq!(
        states,
        ["connecting", "thinking", "working", "streaming", "idle"]
    );
    let view = serve
        .request("progress/view", json!({}))
        .unwrap()
        .to_string();
    assert!(
        view.contains("read the code") && view.contains("hand off"),
        "{view}"
    );
    editor.close();
}

#[test]
fn a_loaded_session_replays_without_turns_and_gets_the_whole_board() {
    let ws = Workspace::new("acp-load");
    let mut editor = Editor::start(&ws, 0);
    editor.request(json!(0), "initialize", json!({"protocolVersion": 1}));
    editor.sidecar(&["start", "the total ignores the discount"]);
    let cwd = ws.root.to_string_lossy().into_owned();
    let (loaded, replay) = editor.request(
        json!(1),
        "session/load",
        json!({"sessionId": "s7", "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(loaded["result"], json!({}));
    assert_eq!(chunks(&replay), ["an old answer"]);
    let load = editor
        .agent_log()
        .into_iter()
        .find(|m| m["method"] == "session/load")
        .unwrap();
    assert_eq!(load["params"]["mcpServers"][0]["name"], "debug-sidecar");
    editor.request(
        json!(2),
        "session/prompt",
        json!({"sessionId": "s7", "prompt": [{"type": "text", "text": "go on"}]}),
    );
    let prompt = prompt_text(&editor.agent_prompts()[0]);
    assert!(prompt[1].starts_with(ACP_BOARD_OPEN));
    editor.close();
}

#[test]
fn when_the_agent_exits_the_editors_requests_fail_and_its_code_passes_on() {
    let ws = Workspace::new("acp-exit");
    let mut editor = Editor::start(&ws, 3);
    editor.open_session();
    let (answer, _) = editor.prompt(2, "SCRIPT:exit");
    assert_eq!(answer["error"]["message"], "the agent exited");
    let status = wait(&mut editor.child);
    assert_eq!(status.code(), Some(3));
}

#[test]
fn when_the_editor_goes_the_agents_whole_group_ends() {
    let ws = Workspace::new("acp-group");
    let mut editor = Editor::start(&ws, 0);
    editor.open_session();
    editor.prompt(2, "SCRIPT:grandchild");
    let pid_file = editor.log.with_extension("jsonl.pid");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    let status = editor.close();
    assert!(status.success());
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie nobody reaps yet.
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone, "the agent's child {pid} outlived the proxy");
}
