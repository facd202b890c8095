//! The in-chat hand-off: after `hand_off_to_user` closed the round, a client
//! that declared elicitation shows the person the round's steps with a form
//! (`choice`: proceed, fixed or reply; an optional `note`), and the answer
//! is applied as the person's command.
//!
//! Two ways, by the protocol revision the request speaks:
//! - before 2026-07-28, the blocking `elicitation/create` request, sent
//!   while the tool call waits;
//! - from 2026-07-28, which forbids server-to-client requests, the
//!   multi-round-trip form: the call answers `input_required` with the form,
//!   and the client calls the tool again with the answer and the
//!   `requestState` it was given.
//!
//! The owner is never held while a person answers: the hand-off is one job,
//! the answer another.

use crate::core::text::{self, FormDismissal};
use crate::engine::FormAnswer;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The key of the form among a multi-round-trip result's input requests.
pub const FORM_KEY: &str = "handoff";

/// How many forms may wait for their answer at once (multi-round-trip);
/// the oldest is forgotten beyond that.
const PENDING_FORMS: usize = 16;

/// How this request's client can be shown the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormWay {
    /// `elicitation/create`, answered while the tool call waits.
    Blocking,
    /// `input_required` (2026-07-28 and later).
    InputRequired,
    /// The client declared no form elicitation: the hand-off is as before.
    None,
}

pub fn form_way(context: &RequestContext<RoleServer>) -> FormWay {
    let form = context
        .client_capabilities()
        .and_then(|caps| caps.elicitation)
        // An empty capability object means form mode (2025-06-18).
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if !form {
        return FormWay::None;
    }
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if modern {
        FormWay::InputRequired
    } else {
        FormWay::Blocking
    }
}

/// The form's fields, as the JSON Schema elicitation allows (flat, of
/// primitive types). The choice's description is the form's one-line help:
/// what of the steps did not fit in the message, or what closing does.
pub fn schema_value(help: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "choice": {
                "type": "string",
                "title": "What now?",
                "description": help,
                "oneOf": [
                    {"const": text::CHOICE_PROCEED, "title": "Proceed: I reproduced it"},
                    {"const": text::CHOICE_FIXED, "title": "Mark fixed: it no longer happens"},
                    {"const": text::CHOICE_REPLY, "title": "Reply to the agent"}
                ]
            },
            "note": {
                "type": "string",
                "title": "Note",
                // One line a host draws whole (84 columns): how to mark.
                "description": "What you saw, or a reply. Mark a moment as it happens: debug-sidecar mark [words]"
            }
        },
        "required": ["choice"]
    })
}

fn schema(help: &str) -> Option<ElicitationSchema> {
    let object = schema_value(help).as_object().cloned()?;
    match ElicitationSchema::from_json_schema(object) {
        Ok(schema) => Some(schema),
        Err(error) => {
            tracing::error!("the hand-off form's schema is not an elicitation schema: {error}");
            None
        }
    }
}

/// The elicitation request for the hand-off form.
pub fn request(form: text::HandOffForm) -> Option<ElicitRequestParams> {
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: form.message,
        requested_schema: schema(&form.help)?,
    })
}

/// The multi-round-trip answer carrying the form; `state` comes back with
/// the person's answer.
pub fn input_required(params: ElicitRequestParams, state: String) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        FORM_KEY.to_string(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    InputRequiredResult::new(Some(requests), Some(state))
}

/// What the person answered, from the client's elicitation result.
pub fn read(result: &ElicitResult) -> FormAnswer {
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.as_ref();
            let field = |name: &str| {
                content
                    .and_then(|c| c.get(name))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let note = field("note").filter(|n| !n.trim().is_empty());
            match field("choice").as_deref() {
                Some(text::CHOICE_PROCEED) => FormAnswer::Proceed(note),
                Some(text::CHOICE_FIXED) => FormAnswer::Fixed(note),
                Some(text::CHOICE_REPLY) => FormAnswer::Reply(note),
                // Accepted without a choice the form offers: no answer.
                _ => FormAnswer::Dismissed(FormDismissal::Unanswered),
            }
        }
        ElicitationAction::Decline => FormAnswer::Dismissed(FormDismissal::Declined),
        ElicitationAction::Cancel => FormAnswer::Dismissed(FormDismissal::Cancelled),
        #[allow(unreachable_patterns)]
        _ => FormAnswer::Dismissed(FormDismissal::Unanswered),
    }
}

/// What the person answered, from a multi-round-trip retry's response.
pub fn read_value(value: Option<&Value>) -> FormAnswer {
    match value.map(|v| serde_json::from_value::<ElicitResult>(v.clone())) {
        Some(Ok(result)) => read(&result),
        _ => FormAnswer::Dismissed(FormDismissal::Unanswered),
    }
}

/// A form handed out in a multi-round-trip result, waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub session: String,
    pub round: u32,
}

/// The forms handed out and not answered yet, by the `requestState` each
/// was given. The state is only a handle: an echo that names none of them
/// is refused, so a client cannot make up an answer for another round.
#[derive(Clone, Default)]
pub struct PendingForms {
    forms: Arc<Mutex<VecDeque<(String, Pending)>>>,
    counter: Arc<AtomicU64>,
}

impl PendingForms {
    pub fn add(&self, pending: Pending) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let token = format!("handoff-{}-{n}-{}", std::process::id(), pending.round);
        if let Ok(mut forms) = self.forms.lock() {
            forms.push_back((token.clone(), pending));
            while forms.len() > PENDING_FORMS {
                forms.pop_front();
            }
        }
        token
    }

    /// The form `token` names, taken: each is answered once.
    pub fn take(&self, token: &str) -> Option<Pending> {
        let mut forms = self.forms.lock().ok()?;
        let at = forms.iter().position(|(t, _)| t == token)?;
        forms.remove(at).map(|(_, pending)| pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_an_elicitation_schema() {
        assert!(schema("… 3. Run it again").is_some());
    }

    #[test]
    fn answers_are_read_whatever_the_client_sends() {
        let accept = |content: Value| {
            read(&ElicitResult::new(ElicitationAction::Accept).with_content(content))
        };
        assert_eq!(
            accept(json!({"choice": "proceed", "note": "total 0"})),
            FormAnswer::Proceed(Some("total 0".into()))
        );
        assert_eq!(
            accept(json!({"choice": "fixed", "note": " "})),
            FormAnswer::Fixed(None)
        );
        assert_eq!(
            accept(json!({"choice": "dance"})),
            FormAnswer::Dismissed(FormDismissal::Unanswered)
        );
        assert_eq!(
            accept(json!([1, 2])),
            FormAnswer::Dismissed(FormDismissal::Unanswered)
        );
        assert_eq!(
            read_value(Some(&json!({"action": "decline"}))),
            FormAnswer::Dismissed(FormDismissal::Declined)
        );
        assert_eq!(
            read_value(Some(&json!("junk"))),
            FormAnswer::Dismissed(FormDismissal::Unanswered)
        );
        assert_eq!(
            read_value(None),
            FormAnswer::Dismissed(FormDismissal::Unanswered)
        );
    }

    #[test]
    fn a_pending_form_is_answered_once() {
        let forms = PendingForms::default();
        let token = forms.add(Pending {
            session: "s".into(),
            round: 2,
        });
        assert!(forms.take("made-up").is_none());
        assert_eq!(forms.take(&token).map(|p| p.round), Some(2));
        assert!(forms.take(&token).is_none());
    }
}
