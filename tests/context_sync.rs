//! Context sync: exactly one current copy of the debug context message.

use debug_sidecar::core::context_sync::{plan, sync_context, ContextPlan, Synced, CONTEXT_TYPE};
use proptest::prelude::*;
use serde_json::{json, Value};

fn copy(content: &str) -> Value {
    json!({"role": "custom", "customType": CONTEXT_TYPE, "content": content, "display": false})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

#[test]
fn one_current_copy_is_unchanged() {
    let messages = vec![user("hi"), copy("board v2"), user("go")];
    assert_eq!(sync_context(&messages, Some("board v2")), Synced::Unchanged);
}

#[test]
fn stale_copies_go_and_the_last_is_rewritten() {
    let messages = vec![copy("v1"), user("hi"), copy("v2"), user("go")];
    let Synced::Changed(out) = sync_context(&messages, Some("v3")) else {
        panic!("must change")
    };
    insta::assert_json_snapshot!(out);
}

#[test]
fn a_missing_copy_is_appended() {
    let Synced::Changed(out) = sync_context(&[user("hi")], Some("v1")) else {
        panic!("must change")
    };
    assert_eq!(out, vec![user("hi"), copy("v1")]);
}

#[test]
fn no_session_removes_every_copy() {
    let messages = vec![copy("v1"), user("hi"), copy("v2")];
    assert_eq!(
        sync_context(&messages, None),
        Synced::Changed(vec![user("hi")])
    );
    assert_eq!(sync_context(&[user("hi")], None), Synced::Unchanged);
}

#[test]
fn other_custom_messages_are_left_alone() {
    let other = json!({"role": "custom", "customType": "todo-reminder", "content": "x"});
    let messages = vec![other.clone(), copy("v1")];
    assert_eq!(sync_context(&messages, Some("v1")), Synced::Unchanged);
    assert_eq!(sync_context(&messages, None), Synced::Changed(vec![other]));
}

proptest! {
    #[test]
    fn always_exactly_one_current_copy(shape in prop::collection::vec(0u8..3, 0..12), content in "[a-z]{0,4}") {
        let messages: Vec<Value> = shape
            .iter()
            .enumerate()
            .map(|(i, k)| match k {
                0 => user(&i.to_string()),
                1 => copy(&format!("old{i}")),
                _ => copy(&content),
            })
            .collect();
        let out = match sync_context(&messages, Some(&content)) {
            Synced::Unchanged => messages.clone(),
            Synced::Changed(out) => out,
        };
        let copies: Vec<_> = out.iter().filter(|m| m["customType"] == CONTEXT_TYPE).collect();
        prop_assert_eq!(copies.len(), 1);
        prop_assert_eq!(&copies[0]["content"], &json!(content));
        let others = |list: &[Value]| list.iter().filter(|m| m["role"] == "user").cloned().collect::<Vec<_>>();
        prop_assert_eq!(others(&out), others(&messages));
        // Syncing the result again changes nothing.
        prop_assert_eq!(sync_context(&out, Some(&content)), Synced::Unchanged);
    }
}

/// What a client does with a plan: the copies it holds, edited as told.
fn applied(held: &[&str], plan: &ContextPlan, content: &str) -> Vec<String> {
    let mut out: Vec<String> = held
        .iter()
        .enumerate()
        .filter(|(i, _)| !plan.drop.contains(i))
        .map(|(i, c)| {
            if plan.rewrite == Some(i) {
                content.to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    if plan.append {
        out.push(content.to_string());
    }
    out
}

#[test]
fn a_plan_over_the_held_copies_alone() {
    assert_eq!(plan(&["v2"], Some("v2")), None);
    assert_eq!(plan(&[], None), None);
    let stale = plan(&["v1", "v2"], Some("v3")).unwrap();
    assert_eq!(
        stale,
        ContextPlan {
            drop: vec![0],
            rewrite: Some(1),
            append: false
        }
    );
    let missing = plan(&[], Some("v1")).unwrap();
    assert!(missing.append && missing.drop.is_empty() && missing.rewrite.is_none());
    let ended = plan(&["v1", "v2"], None).unwrap();
    assert_eq!(ended.drop, vec![0, 1]);
    assert_eq!(ended.rewrite, None);
}

proptest! {
    /// A client applying the plan to its copies ends where syncing the
    /// whole list does: exactly one copy, the current board.
    #[test]
    fn a_client_applying_the_plan_holds_one_current_copy(
        held in prop::collection::vec("[a-c]{0,2}", 0..6),
        content in "[a-c]{0,2}",
    ) {
        let held: Vec<&str> = held.iter().map(String::as_str).collect();
        let after = match plan(&held, Some(&content)) {
            None => held.iter().map(|c| c.to_string()).collect(),
            Some(plan) => applied(&held, &plan, &content),
        };
        prop_assert_eq!(after, vec![content.clone()]);
        let messages: Vec<Value> = held.iter().map(|c| copy(c)).collect();
        let synced = match sync_context(&messages, Some(&content)) {
            Synced::Unchanged => messages,
            Synced::Changed(out) => out,
        };
        prop_assert_eq!(synced, vec![copy(&content)]);
    }
}
