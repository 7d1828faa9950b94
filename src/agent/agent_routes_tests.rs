//! Routing of the agent's frames: within bounds, past a window, late, and never asked for.

use container_isolation_agent::protocol::{Message, CHUNK};

use super::*;

fn output(bytes: usize) -> Message {
    Message::Output {
        stderr: false,
        data: vec![0; bytes],
    }
}

#[test]
fn a_request_gets_its_window_and_an_overrun_is_refused() {
    let routes = Routes::default();
    let mut end = routes.open(1);
    let mut sent = 0;
    while sent + CHUNK as u64 <= REPLY_WINDOW as u64 + OVERDRAW {
        routes.deliver(1, output(CHUNK)).unwrap();
        sent += CHUNK as u64;
    }
    assert!(routes
        .deliver(1, output(CHUNK))
        .unwrap_err()
        .contains("past the"));
    assert!(end.replies.try_recv().is_ok());
    assert_eq!(routes.pending(), 0);
}

#[test]
fn what_is_granted_makes_room_and_more_than_that_is_refused() {
    let routes = Routes::default();
    let mut end = routes.open(1);
    let take = |end: &mut RouteEnd| {
        end.replies.try_recv().unwrap();
    };
    for _ in 0..100 {
        routes.deliver(1, output(CHUNK)).unwrap();
        take(&mut end);
        end.granted.fetch_add(CHUNK as u64, Ordering::AcqRel);
    }
    // A consumer that keeps pace but grants nothing more: the window, then a refusal.
    let mut refused = None;
    for _ in 0..100 {
        if let Err(why) = routes.deliver(1, output(CHUNK)) {
            refused = Some(why);
            break;
        }
        take(&mut end);
    }
    assert!(refused.unwrap().contains("past the"));
}

#[test]
fn a_flood_of_replies_without_data_is_refused() {
    let routes = Routes::default();
    let _end = routes.open(1);
    let refused =
        (0..=FREE_REPLIES).find_map(|_| routes.deliver(1, Message::Signalled { count: 1 }).err());
    assert!(refused.unwrap().contains("replies to request 1"));
}

#[test]
fn a_closed_request_gets_what_was_under_way_and_no_more() {
    let routes = Routes::default();
    drop(routes.open(1));
    routes.close(1);
    let mut late = 0;
    while late + CHUNK as u64 <= LATE_BUDGET {
        routes.deliver(1, output(CHUNK)).unwrap();
        late += CHUNK as u64;
    }
    assert!(routes
        .deliver(1, output(CHUNK))
        .unwrap_err()
        .contains("after it was closed"));
}

#[test]
fn an_answer_to_a_request_never_made_is_refused() {
    let routes = Routes::default();
    drop(routes.open(3));
    let err = routes.deliver(4, Message::Done).unwrap_err();
    assert!(err.contains("never made"), "{err}");
}

#[test]
fn a_request_closed_long_ago_gets_only_replies_without_data() {
    let routes = Routes::default();
    for id in 1..=(LATE_KEPT as u32 + 1) {
        drop(routes.open(id));
        routes.close(id);
    }
    let exited = Message::Exited { code: 0, signal: 0 };
    routes.deliver(1, exited).unwrap();
    assert!(routes
        .deliver(1, output(10))
        .unwrap_err()
        .contains("long before"));
    routes.deliver(LATE_KEPT as u32 + 1, output(10)).unwrap();
}

#[test]
fn an_acks_route_takes_any_number_of_credits_and_nothing_else() {
    let routes = Routes::default();
    let mut end = routes.open_acks(1);
    for _ in 0..2 * FREE_REPLIES {
        routes.deliver(1, Message::Credit { bytes: 1 }).unwrap();
        end.replies.try_recv().unwrap();
    }
    assert!(routes
        .deliver(1, output(1))
        .unwrap_err()
        .contains("acknowledgement"));
    let _plain = routes.open(2);
    let refused =
        (0..=FREE_REPLIES).find_map(|_| routes.deliver(2, Message::Credit { bytes: 1 }).err());
    assert!(refused.is_some_and(|why| why.contains("replies")));
}
