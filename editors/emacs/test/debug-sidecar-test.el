;;; debug-sidecar-test.el --- Tests of debug-sidecar.el against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; editors/emacs/test.sh byte-compiles the package and these tests, then
;; runs them in batch mode with `ert-run-tests-batch-and-exit' (-Q, the
;; package directory on the load path), DEBUG_SIDECAR_BIN set to the
;; absolute path of the binary.
;; Every test that needs the server runs `debug-sidecar serve' from
;; DEBUG_SIDECAR_BIN in a fresh temporary workspace, and stops it after.
;; The whole-session test prints what the person sees (lighter, notices,
;; buffers) to stdout.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'debug-sidecar)

(defvar ds-test-bin (getenv "DEBUG_SIDECAR_BIN"))

(defconst ds-test-checkout
  "#!/bin/sh
# checkout.sh PRICE...: the total of the prices, 10% off from three items on.
count=$#
total=0
for price in \"$@\"; do total=$((total + price)); done
# discount
if [ \"$count\" -gt 3 ]; then total=$((total * 90 / 100)); fi
echo \"$total\"
")

(defun ds-test-capture (title text)
  "Print TEXT under TITLE: the text capture of what the person sees."
  (princ (format "\n--- %s ---\n%s\n" title (string-trim-right text))))

(defun ds-test-wait (what pred &optional seconds)
  "Wait up to SECONDS (default 10) for PRED to return non-nil; fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 10)))
        value)
    (while (and (not (setq value (funcall pred)))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "timed out waiting for" what
                              :lighter (debug-sidecar-lighter)
                              :notice debug-sidecar-last-notice)))))

(defun ds-test-wait-lighter (regexp)
  "Wait for the lighter to match REGEXP; return it."
  (ds-test-wait (format "lighter matching %S" regexp)
                (lambda () (and (string-match-p regexp (debug-sidecar-lighter))
                                (debug-sidecar-lighter)))))

(defvar ds-test-agent-conn nil
  "The agent's own `debug-sidecar serve' on the test workspace.")

(defun ds-test-agent (method params)
  "Play the agent: send METHOD with PARAMS from a second server process.
The agent's harness (hooks, MCP) runs its own sidecar on the workspace;
the client learns of its changes through its own server's notifications."
  (unless (and ds-test-agent-conn (jsonrpc-running-p ds-test-agent-conn))
    (let ((root default-directory))
      (setq ds-test-agent-conn
            (jsonrpc-process-connection
             :name "ds-test-agent"
             :process (lambda ()
                        (make-process :name "ds-test-agent" :command (list ds-test-bin "serve")
                                      :connection-type 'pipe :coding 'utf-8-emacs-unix
                                      :noquery t
                                      :stderr (get-buffer-create "*ds-test-agent stderr*")))
             :notification-dispatcher #'ignore))
      (jsonrpc-request ds-test-agent-conn 'initialize
                       (list :rootUri (debug-sidecar--file-uri root)
                             :capabilities (make-hash-table)))
      (jsonrpc-notify ds-test-agent-conn 'initialized (make-hash-table))))
  (jsonrpc-request ds-test-agent-conn method params))

(defun ds-test-agent-stop ()
  "Stop the agent's server."
  (when ds-test-agent-conn
    (let ((proc (jsonrpc--process ds-test-agent-conn)))
      (when (process-live-p proc)
        (ignore-errors (jsonrpc-request ds-test-agent-conn 'shutdown nil :timeout 5))
        (ignore-errors (jsonrpc-notify ds-test-agent-conn 'exit nil))
        (with-timeout (5 (delete-process proc))
          (while (process-live-p proc) (accept-process-output proc 0.05))))
      (ignore-errors (jsonrpc-shutdown ds-test-agent-conn t)))
    (setq ds-test-agent-conn nil)))

(defun ds-test-event (kind &rest more)
  "Play the agent's harness: a `turn/event' of KIND with MORE fields."
  (jsonrpc-notify (debug-sidecar-connection) 'turn/event (append (list :kind kind) more)))

(defun ds-test-buffer-text (name)
  "The text of buffer NAME, without properties."
  (with-current-buffer name (buffer-substring-no-properties (point-min) (point-max))))

(defun ds-test-render (text)
  "TEXT as displayed: `(space :align-to COL)' display properties become spaces."
  (let ((out "") (i 0))
    (while (< i (length text))
      (let* ((next (next-single-property-change i 'display text (length text)))
             (disp (get-text-property i 'display text)))
        (if (and (eq (car-safe disp) 'space) (plist-get (cdr disp) :align-to))
            (let ((col (plist-get (cdr disp) :align-to))
                  (bol (or (cl-position ?\n out :from-end t) -1)))
              (setq out (concat out (make-string (max 1 (- col (- (length out) bol 1))) ?\s))))
          (setq out (concat out (substring-no-properties text i next))))
        (setq i next)))
    out))

(defun ds-test-probe-rows ()
  "The probes buffer as a list of (PROBE HYPOTHESIS STATE LOCATION)."
  (with-current-buffer "*debug-sidecar probes*"
    (mapcar (lambda (e) (mapcar #'substring-no-properties (append (cadr e) nil)))
            tabulated-list-entries)))

(defun ds-test-insert-after (file regexp text)
  "Insert TEXT in FILE after the first line matching REGEXP."
  (with-temp-buffer
    (insert-file-contents file)
    (goto-char (point-min))
    (re-search-forward regexp)
    (forward-line 1)
    (insert text)
    (unless (bolp) (insert "\n"))
    (write-region nil nil file nil 'silent)))

(defun ds-test-remove-block (file id)
  "Remove probe ID's block, markers included, from FILE."
  (with-temp-buffer
    (insert-file-contents file)
    (goto-char (point-min))
    (let ((beg (progn (re-search-forward (format "^.*#region debug-probe %s\\b" id))
                      (line-beginning-position)))
          (end (progn (re-search-forward (format "^.*#endregion debug-probe %s\\b" id))
                      (line-beginning-position 2))))
      (delete-region beg end))
    (write-region nil nil file nil 'silent)))

(defun ds-test-reset ()
  "Forget every state of a previous test."
  (setq debug-sidecar--conn nil
        debug-sidecar--root nil
        debug-sidecar--status 'off
        debug-sidecar--stop-reason nil
        debug-sidecar--snapshot nil
        debug-sidecar--turn nil
        debug-sidecar--bubble nil
        debug-sidecar-last-notice nil
        debug-sidecar-last-kickoff nil
        debug-sidecar-last-error nil
        debug-sidecar--agents nil
        debug-sidecar--agents-session nil
        kill-ring nil)
  (dolist (name '("*debug-sidecar*" "*debug-sidecar probes*" "*debug-sidecar logs*"
                  "*debug-sidecar subagents*"))
    (when (get-buffer name) (kill-buffer name))))

(defmacro ds-test-with-workspace (&rest body)
  "Run BODY in a fresh workspace with `checkout.sh', against DEBUG_SIDECAR_BIN."
  (declare (indent 0) (debug t))
  `(let* ((ws (file-name-as-directory (make-temp-file "ds-emacs-" t)))
          (default-directory ws)
          (debug-sidecar-program ds-test-bin)
          (debug-sidecar-kickoff-function #'debug-sidecar-kickoff-to-kill-ring)
          (process-environment (cons "DEBUG_SIDECAR_DIR" process-environment)))
     (unless (and ds-test-bin (file-executable-p ds-test-bin))
       (error "Set DEBUG_SIDECAR_BIN to the absolute path of the debug-sidecar binary"))
     (ds-test-reset)
     (with-temp-file (expand-file-name "checkout.sh" ws) (insert ds-test-checkout))
     (unwind-protect
         (progn (debug-sidecar-mode 1) ,@body)
       (ds-test-agent-stop)
       (let ((proc (and debug-sidecar--conn (jsonrpc--process debug-sidecar--conn))))
         (debug-sidecar-mode -1)
         (when (and proc (process-live-p proc)) (delete-process proc)))
       (dolist (buf (buffer-list))
         (when-let ((file (buffer-file-name buf)))
           (when (string-prefix-p ws file)
             (with-current-buffer buf (set-buffer-modified-p nil))
             (kill-buffer buf))))
       (ds-test-reset)
       (delete-directory ws t))))

;;;; Pure formatting, no process

(ert-deftest debug-sidecar-test-lighter ()
  (let ((snap '(:active t :stage "user_turn" :round 2)))
    (should (equal (debug-sidecar--format-lighter 'off nil nil nil "x")
                   " Debug[not connected]"))
    (should (equal (debug-sidecar--format-lighter 'stopped nil snap nil "x")
                   " Debug[stopped]"))
    (should (equal (debug-sidecar--format-lighter
                    'ready '(:state "idle" :label "idle") snap nil "⠋")
                   " Debug[idle · user_turn r2]"))
    (should (equal (debug-sidecar--format-lighter
                    'ready '(:state "thinking" :label "thinking…")
                    '(:active t :stage "investigating" :round 1) '(:title "t" :percent 40) "⠋")
                   " Debug[⠋ thinking… · investigating r1 · 40%]"))
    (should (equal (debug-sidecar--format-lighter
                    'ready '(:state "idle" :label "idle") '(:active :json-false :stage nil) nil "⠋")
                   " Debug[idle · inactive]"))))

(ert-deftest debug-sidecar-test-handoff-text ()
  (let ((text (debug-sidecar--format-handoff
               '(:round 1 :stage "user_turn" :handoff "reproduce" :problem "Total is wrong."
                        :steps ["Run `sh checkout.sh 1 2 3`." "2) Press Proceed."]
                        :pendingUserActions [(:id "R1" :method "user_report"
                                                  :instructions ["Say what it printed."])]
                        :probes (:live 1 :list []) :logFile "/w/r1.jsonl")
               '(:proceed "p" :done "f" :abort "a"))))
    (should (string-match-p "round 1 · your turn (reproduce)" text))
    (should (string-match-p "^  1\\. Run `sh checkout.sh 1 2 3`\\.$" text))
    (should (string-match-p "^  2) Press Proceed\\.$" text))
    (should (string-match-p "R1 (user_report): Say what it printed\\." text))
    (should (string-match-p "p proceed .* f mark fixed .* a abort" text))))

(ert-deftest debug-sidecar-test-probe-entries ()
  (let* ((result '(:probes [(:id "p1" :file "a.sh" :line 4 :hypothesisId "H1" :state "live")
                            (:id "p2" :file "b.py" :line nil :hypothesisId nil :state "issued")
                            (:id "p3" :file "c.go" :line nil :hypothesisId "H2" :state "missing")
                            (:id "p4" :file "d.sh" :line 9 :hypothesisId nil :state "live")]
                   :live 2 :missing ["p3"] :untracked ["p4"]
                   :foreign [(:file "e.js" :line 3 :kind "cursorAgentLog" :text "// #region agent log")]
                   :halfRemoved [(:file "f.sh" :line 7 :probeId "p9")
                                 (:file "d.sh" :line 9 :probeId "p4")
                                 (:file "other.sh" :line 2 :probeId "p1")]
                   :scanned t))
         (rows (mapcar (lambda (e) (mapcar #'substring-no-properties (append (cadr e) nil)))
                       (debug-sidecar--probe-entries result))))
    (should (equal rows '(("p1" "H1" "live" "a.sh:4")
                          ("p2" "" "issued" "b.py")
                          ("p3" "H2" "missing" "c.go")
                          ("p4" "" "half-removed (adopted)" "d.sh:9")
                          ("p9" "" "half-removed" "f.sh:7")
                          ("p1" "" "half-removed" "other.sh:2")
                          ("-" "" "foreign: Cursor agent log" "e.js:3"))))
    (should (equal (car (car (debug-sidecar--probe-entries result))) '(:file "a.sh" :line 4)))
    (should (equal (debug-sidecar--probes-summary result)
                   "2 live · 1 issued · 1 missing · 3 half-removed · 1 foreign"))))

(ert-deftest debug-sidecar-test-log-entry ()
  (should (equal (debug-sidecar--format-log-entry
                  '(:line 3 :entry (:probeId "p1" :hypothesisId "H1" :location "checkout.sh"
                                             :message "count" :data (:count "3")
                                             :timestamp 1700000000123))
                  t)
                 "    3  22:13:20.123  p1   H1   checkout.sh  count  {\"count\":\"3\"}"))
  (should (equal (debug-sidecar--format-log-entry '(:line 4 :entry (:message "no probe")) t)
                 "    4  --:--:--.---  -    -      no probe")))

;;;; Against the server

(ert-deftest debug-sidecar-test-whole-session ()
  (ds-test-with-workspace
    (let ((script (expand-file-name "checkout.sh" ws))
          snap)
      (ds-test-capture "mode line, before anything" (debug-sidecar-lighter))
      (should (equal (debug-sidecar-lighter) " Debug[not connected]"))

      ;; The person starts a session.
      (debug-sidecar-start "Checkout total ignores the 3-item discount.")
      (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r1]"))
      (should (string-match-p "Debug Mode is on" (car kill-ring)))
      (ds-test-capture "after M-x debug-sidecar-start" (concat (debug-sidecar-lighter) "\n"
                                                              debug-sidecar-last-notice))

      ;; The agent's turn starts; the lighter follows it with a spinner.
      (ds-test-event "turnStart" :source "user")
      (ds-test-wait-lighter "\\` Debug\\[. connecting… · investigating r1\\]\\'")
      (ds-test-event "reasoning")
      (let ((l1 (ds-test-wait-lighter "\\` Debug\\[. thinking… · investigating r1\\]\\'")))
        (ds-test-capture "while the agent thinks" l1)
        ;; The spinner turns while the turn is busy.
        (ds-test-wait "the spinner to turn"
                      (lambda () (not (equal (debug-sidecar-lighter) l1)))))
      (should debug-sidecar--spinner-timer)

      ;; The agent records a hypothesis and places a probe from a snippet.
      (ds-test-agent 'debug/recordHypotheses
                     '(:hypotheses [(:id "H1" :statement "The discount check uses -gt instead of -ge."
                                         :status "open")]))
      (let ((res (ds-test-agent 'debug/probeSnippet
                                '(:file "checkout.sh" :hypothesisId "H1"
                                        :message "count before the discount check"
                                        :variables ["count"]))))
        (should (equal (plist-get (plist-get res :probe) :id) "p1"))
        (ds-test-insert-after script "^# discount$" (plist-get res :snippet)))
      (ds-test-event "toolCall" :tool "Edit")
      (ds-test-wait-lighter "working… · investigating r1")
      (ds-test-agent 'debug/handOff
                     '(:mode "reproduce"
                             :steps ["Run `sh checkout.sh 1000 2000 3000`." "Press Proceed."]))
      (ds-test-event "turnEnd")

      ;; The round is the person's: lighter, notice and hand-off buffer.
      (ds-test-wait-lighter "\\` Debug\\[idle · user_turn r1\\]\\'")
      (should-not debug-sidecar--spinner-timer)
      (should (string-match-p "your turn (round 1): 2 steps to reproduce; then .* to proceed"
                              debug-sidecar-last-notice))
      (let ((text (ds-test-buffer-text "*debug-sidecar*")))
        (should (string-match-p "1\\. Run `sh checkout.sh 1000 2000 3000`\\." text))
        (should (string-match-p "p proceed" text))
        (should (string-match-p "f mark fixed" text))
        (ds-test-capture "the round is yours: mode line and echo area"
                         (concat (debug-sidecar-lighter) "\n" debug-sidecar-last-notice))
        (ds-test-capture "buffer *debug-sidecar*" text))
      (should (get-buffer-window "*debug-sidecar*"))

      ;; The person runs the program: the probe logs a line.
      (setq snap debug-sidecar--snapshot)
      (should (equal (with-output-to-string
                       (call-process "sh" nil standard-output nil script "1000" "2000" "3000"))
                     "6000\n"))
      (ds-test-wait "the log line of the run"
                    (lambda () (and (file-exists-p (plist-get snap :logFile))
                                    (> (file-attribute-size
                                        (file-attributes (plist-get snap :logFile)))
                                       0))))
      (debug-sidecar-logs)
      (ds-test-wait "line 1 in the logs buffer"
                    (lambda () (string-match-p "^    1  .* p1   H1   checkout.sh  count before the discount check  {\"count\":\"3\"}$"
                                               (ds-test-buffer-text "*debug-sidecar logs*"))))
      ;; More lines arrive while the buffer is open: appended as announced.
      (write-region (concat "{\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"checkout.sh\",\"message\":\"count before the discount check\",\"data\":{\"count\":\"4\"},\"timestamp\":"
                            (format "%d" (* 1000 (truncate (float-time)))) "}\n"
                            "{\"probeId\":\"p1\",\"hypothesisId\":\"H1\",\"location\":\"checkout.sh\",\"message\":\"count before the discount check\",\"data\":{\"count\":\"2\"},\"timestamp\":"
                            (format "%d" (* 1000 (truncate (float-time)))) "}\n")
                    nil (plist-get snap :logFile) 'append 'silent)
      (ds-test-wait "lines 2 and 3 appended to the logs buffer"
                    (lambda () (string-match-p "^    3  .*{\"count\":\"2\"}$"
                                               (ds-test-buffer-text "*debug-sidecar logs*"))))
      (let ((text (ds-test-buffer-text "*debug-sidecar logs*")))
        (should (= 3 (cl-count ?\n text)))
        (should (string-match-p "^    2  .*{\"count\":\"4\"}$" text))
        (ds-test-capture "buffer *debug-sidecar logs*"
                         (concat (with-current-buffer "*debug-sidecar logs*"
                                   (format "%s" header-line-format))
                                 "\n" text)))

      ;; Probes: the live one, a Cursor leftover and a half-removed block.
      (with-temp-file (expand-file-name "legacy.js" ws)
        (insert "function f() {\n  // #region agent log\n  fetch('http://127.0.0.1:7242/ingest/abc', {method: 'POST'});\n  // #endregion\n}\n"))
      (with-temp-file (expand-file-name "half.sh" ws)
        (insert "echo one\n# #region debug-probe p7 default\necho two\n"))
      (debug-sidecar-probes)
      (let ((rows (ds-test-probe-rows)))
        (should (member '("p1" "H1" "live" "checkout.sh:7") rows))
        ;; p7's start marker is adopted into the ledger and half-removed:
        ;; one row says both.
        (should (equal (cl-remove-if-not (lambda (r) (equal (car r) "p7")) rows)
                       '(("p7" "" "half-removed (adopted)" "half.sh:2"))))
        (should (cl-find-if (lambda (r) (and (string-prefix-p "foreign" (nth 2 r))
                                             (string-prefix-p "legacy.js:" (nth 3 r))))
                            rows))
        (ds-test-capture "buffer *debug-sidecar probes*"
                         (with-current-buffer "*debug-sidecar probes*"
                           (concat header-line-format
                                   "\n" (ds-test-render (buffer-string))))))
      ;; RET on p1 visits its start marker.
      (with-current-buffer "*debug-sidecar probes*"
        (goto-char (point-min))
        (while (not (equal (car-safe (append (tabulated-list-get-entry) nil)) "p1"))
          (forward-line 1))
        (debug-sidecar-probes-visit))
      (with-current-buffer (window-buffer (selected-window))
        (should (equal (buffer-file-name) (expand-file-name "checkout.sh" ws)))
        (goto-char (window-point (selected-window)))
        (should (= (line-number-at-pos) 7))
        (should (string-match-p "#region debug-probe p1"
                                (buffer-substring (line-beginning-position) (line-end-position))))
        ;; The agent edits the file from now on.
        (kill-buffer))
      (delete-file (expand-file-name "legacy.js" ws))
      (delete-file (expand-file-name "half.sh" ws))

      ;; The person marks the moment: the run holds it, the message says where.
      (debug-sidecar-mark "it froze right after Save")
      (ds-test-capture "after C-c , m (mark) with \"it froze right after Save\""
                       debug-sidecar-last-notice)
      (should (string-match-p "\\`Marked \"it froze right after Save\" at line [0-9]+ of run r1-"
                              debug-sidecar-last-notice))
      (should (eq (lookup-key debug-sidecar-command-map "m") 'debug-sidecar-mark))

      ;; Proceed: round 2 is the agent's, and the logs buffer follows the new run.
      (debug-sidecar-proceed "It printed 6000.")
      (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r2]"))
      (ds-test-capture "after p (proceed) with the note \"It printed 6000.\""
                       (concat (debug-sidecar-lighter) "\n" debug-sidecar-last-notice))
      (should (string-match-p "The user reported:\n  > It printed 6000\\." (car kill-ring)))
      (should-not (get-buffer-window "*debug-sidecar*"))
      (ds-test-wait "the logs buffer to show run 2"
                    (lambda () (with-current-buffer "*debug-sidecar logs*"
                                 (and (equal debug-sidecar--logs-run
                                             (plist-get debug-sidecar--snapshot :runId))
                                      (string-prefix-p "r2-" debug-sidecar--logs-run)
                                      (= (point-min) (point-max))))))

      ;; The agent fixes the bug and hands over a verification run.
      (ds-test-event "turnStart" :source "continuation")
      (ds-test-agent 'debug/recordHypotheses
                     '(:hypotheses [(:id "H1" :statement "The discount check uses -gt instead of -ge."
                                         :status "confirmed" :evidence ["count=3"])]))
      (with-temp-buffer
        (insert-file-contents script)
        (goto-char (point-min))
        (search-forward "-gt 3")
        (replace-match "-ge 3")
        (write-region nil nil script nil 'silent))
      (ds-test-agent 'debug/handOff
                     '(:mode "reproduce" :steps ["Run it again; it should print 5400."]))
      (ds-test-event "turnEnd")
      (ds-test-wait-lighter "\\` Debug\\[idle · user_turn r2\\]\\'")
      (should (string-match-p "your turn (round 2): 1 step to reproduce" debug-sidecar-last-notice))
      (should (string-match-p "1\\. Run it again; it should print 5400\\."
                              (ds-test-buffer-text "*debug-sidecar*")))
      (should (equal (with-output-to-string
                       (call-process "sh" nil standard-output nil script "1000" "2000" "3000"))
                     "5400\n"))
      (ds-test-wait "run 2's line in the logs buffer"
                    (lambda () (string-match-p "^    1  .*{\"count\":\"3\"}$"
                                               (ds-test-buffer-text "*debug-sidecar logs*"))))

      ;; Mark fixed: the agent cleans up, the sidecar verifies, the session ends.
      (debug-sidecar-done)
      (should (equal (debug-sidecar-lighter) " Debug[idle · cleaning_up r2]"))
      (should (string-match-p "Clean up now" (car kill-ring)))
      (ds-test-capture "after Mark fixed" (concat (debug-sidecar-lighter) "\n" debug-sidecar-last-notice))
      (ds-test-remove-block script "p1")
      (let ((stop (ds-test-agent 'debug/stop (debug-sidecar--empty))))
        (should (equal (plist-get stop :decision) "allow"))
        (should (string-match-p "Cleanup verified" (plist-get stop :notice))))
      (ds-test-wait-lighter "\\` Debug\\[idle · inactive\\]\\'")
      (should (equal debug-sidecar-last-notice "Debug session ended."))
      (ds-test-capture "after the agent's cleanup" (concat (debug-sidecar-lighter) "\n"
                                                           debug-sidecar-last-notice))

      ;; Turning the mode off stops the server cleanly.
      (let ((proc (jsonrpc--process (debug-sidecar-connection))))
        (debug-sidecar-mode -1)
        (should-not (process-live-p proc))
        (should (eq (process-status proc) 'exit))
        (should (= (process-exit-status proc) 0))
        (should (equal (debug-sidecar-lighter) " Debug[not connected]"))))))

(ert-deftest debug-sidecar-test-abort ()
  (ds-test-with-workspace
    (debug-sidecar-start "The page flickers.")
    (let ((res (ds-test-agent 'debug/probeSnippet '(:file "checkout.sh"))))
      (ds-test-insert-after (expand-file-name "checkout.sh" ws) "^# discount$"
                            (plist-get res :snippet)))
    (should (= 0 (plist-get (plist-get debug-sidecar--snapshot :probes) :live)))
    ;; A scan sees p1 on disk: the answer lists it, and the change of the
    ;; session's state comes as a notification (behind the answer: see
    ;; `debug-sidecar--drain').
    (should (member '("p1" "" "live" "checkout.sh:7")
                    (progn (debug-sidecar-probes) (ds-test-probe-rows))))
    (ds-test-wait "the notification of the live probe"
                  (lambda () (= 1 (plist-get (plist-get debug-sidecar--snapshot :probes) :live)))
                  3)
    (debug-sidecar-abort t)
    (should (equal (debug-sidecar-lighter) " Debug[idle · inactive]"))
    (should (string-match-p "\\`Debug session aborted\\.  Probes still on disk: p1 (checkout\\.sh:7)\\'"
                            debug-sidecar-last-notice))
    (ds-test-capture "after M-x debug-sidecar-abort with a probe left" debug-sidecar-last-notice)))

(ert-deftest debug-sidecar-test-missing-binary ()
  (ds-test-with-workspace
    (dolist (prog '("/nonexistent/dir/debug-sidecar" "debug-sidecar-not-installed-anywhere"))
      (let* ((debug-sidecar-program prog)
             (err (should-error (debug-sidecar-start "Anything.") :type 'user-error)))
        (should (string-match-p (format "\\`The debug-sidecar program \"%s\" was not found" (regexp-quote prog))
                                (cadr err)))
        (should (string-match-p "debug-sidecar-program" (cadr err)))
        (should (eq debug-sidecar--status 'off))
        (should-not (debug-sidecar-connection))
        (should (equal (debug-sidecar-lighter) " Debug[not connected]"))
        (ds-test-capture "debug-sidecar-program missing" (cadr err))))
    ;; A program that is not the sidecar (it exits at once).
    (let* ((debug-sidecar-program (executable-find "false"))
           (err (should-error (debug-sidecar-start "Anything.") :type 'user-error)))
      (should (string-match-p "\\`Could not start .*/false serve. in .*: it exited with status 1\\'"
                              (cadr err)))
      (should (eq debug-sidecar--status 'off))
      (ds-test-capture "debug-sidecar-program is not the sidecar" (cadr err)))
    ;; Found again, it works.
    (debug-sidecar-start "Anything.")
    (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r1]"))))

(ert-deftest debug-sidecar-test-crash-and-restart ()
  (ds-test-with-workspace
    (debug-sidecar-start "Checkout total ignores the 3-item discount.")
    ;; An agent inside Emacs hands off through the client's own connection.
    (debug-sidecar-request 'debug/handOff '(:mode "reproduce" :steps ["Run `sh checkout.sh 1 2 3`."]))
    ;; The snapshot in the answer is the state at once.
    (should (equal (debug-sidecar-lighter) " Debug[idle · user_turn r1]"))
    (let* ((proc (jsonrpc--process (debug-sidecar-connection)))
           (pid (process-id proc)))
      (signal-process pid 'KILL)
      (ds-test-wait-lighter "\\` Debug\\[stopped\\]\\'")
      (should-not (process-live-p proc)))
    (should (string-match-p "\\`The debug sidecar stopped (killed by signal 9); run M-x debug-sidecar-restart"
                            debug-sidecar-last-notice))
    (ds-test-capture "the sidecar was killed: mode line and echo area"
                     (concat (debug-sidecar-lighter) "\n" debug-sidecar-last-notice))
    ;; A command while it is down says how to get it back.
    (let ((err (should-error (debug-sidecar-proceed nil) :type 'user-error)))
      (should (string-match-p "\\`The debug sidecar stopped (killed by signal 9); run M-x debug-sidecar-restart"
                              (cadr err))))
    ;; Restart: the session comes back from disk at the same stage.
    (debug-sidecar-restart)
    (should (equal (debug-sidecar-lighter) " Debug[idle · user_turn r1]"))
    (should (equal (plist-get debug-sidecar--snapshot :steps) ["Run `sh checkout.sh 1 2 3`."]))
    (should (string-match-p "\\`debug-sidecar restarted: round 1 · your turn (reproduce)"
                            debug-sidecar-last-notice))
    (ds-test-capture "after M-x debug-sidecar-restart" (concat (debug-sidecar-lighter) "\n"
                                                               debug-sidecar-last-notice))
    (debug-sidecar-proceed "Still 6000.")
    (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r2]"))))

;; The server dies while a request waits for its answer: the request is
;; registered but never written (so the server cannot answer it first),
;; and the server is killed.
(defun ds-test--drop-and-kill (send conn &rest args)
  "Call SEND with CONN and ARGS, except for `debug/status': kill the server then."
  (if (not (equal (format "%s" (plist-get args :method)) "debug/status"))
      (apply send conn args)
    (signal-process (process-id (jsonrpc--process conn)) 'KILL)))

(ert-deftest debug-sidecar-test-crash-during-request ()
  (ds-test-with-workspace
    (debug-sidecar-start "Anything.")
    (advice-add 'jsonrpc-connection-send :around #'ds-test--drop-and-kill)
    (unwind-protect
        (let ((err (should-error (debug-sidecar-status) :type 'user-error)))
          (should (string-match-p "\\`The debug sidecar stopped (killed by signal 9); run M-x debug-sidecar-restart"
                                  (cadr err))))
      (advice-remove 'jsonrpc-connection-send #'ds-test--drop-and-kill))
    (should (equal (debug-sidecar-lighter) " Debug[stopped]"))
    (debug-sidecar-restart)
    ;; The session is back from disk: same problem and round.  (DESIGN.md
    ;; lets revival turn `investigating' into `user_turn'; the current
    ;; server keeps `investigating'.)
    (should (string-match-p "\\` Debug\\[idle · \\(investigating\\|user_turn\\) r1\\]\\'"
                            (debug-sidecar-lighter)))
    (should (equal (plist-get debug-sidecar--snapshot :problem) "Anything."))
    ;; Killed, and a command comes after Emacs reaped the process but before
    ;; its sentinel ran (a busy loop reads the status without running
    ;; sentinels): the person is told it stopped and how to restart.
    (let ((proc (jsonrpc--process (debug-sidecar-connection)))
          (deadline (+ (float-time) 5)))
      (signal-process (process-id proc) 'KILL)
      (while (and (process-live-p proc) (< (float-time) deadline)))
      (should-not (process-live-p proc))
      (should-not (process-get proc 'jsonrpc-sentinel-cleanup-started)))
    (let ((err (should-error (debug-sidecar-proceed "x") :type 'user-error)))
      (should (string-match-p "\\`The debug sidecar stopped (killed by signal 9); run M-x debug-sidecar-restart"
                              (cadr err))))
    (should (equal (debug-sidecar-lighter) " Debug[stopped]"))
    (debug-sidecar-restart)
    (should (debug-sidecar-connection))))

(defun ds-test--pause-after-handoff (_conn &rest args)
  "After the hand-off in ARGS is written, block 0.3 s without reading."
  (when (equal (format "%s" (plist-get args :method)) "debug/handOff")
    (call-process "sleep" nil nil nil "0.3")))

(ert-deftest debug-sidecar-test-illegal-command ()
  (ds-test-with-workspace
    (debug-sidecar-start "Checkout total ignores the 3-item discount.")
    (let ((err (should-error (debug-sidecar-start "Another.") :type 'user-error)))
      (should (equal (cadr err)
                     "Cannot start a debug session: a debug session is already active (stage investigating); abort it or finish it first. Possible now: hand off, proceed, mark fixed, abort, observe, attach, record hypotheses, place a probe."))
      (should (equal (plist-get debug-sidecar-last-error :code) -32050))
      (should (equal (plist-get (plist-get debug-sidecar-last-error :data) :stage) "investigating"))
      (ds-test-capture "M-x debug-sidecar-start while a session is active" (cadr err)))
    ;; Nothing changed, and the connection is still up.
    (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r1]"))
    (should (debug-sidecar-connection))
    ;; The hand-off is legal now.  Sent without applying its answer, the
    ;; stage reaches the lighter through the notification that follows the
    ;; answer.  Emacs waits (without reading) until both are in the pipe, so
    ;; they arrive in one read: see `debug-sidecar--drain'.
    (let ((read-process-output-max 65536))
      (advice-add 'jsonrpc-connection-send :after #'ds-test--pause-after-handoff)
      (unwind-protect
          (debug-sidecar--request 'debug/handOff '(:mode "reproduce" :steps ["Run it."]))
        (advice-remove 'jsonrpc-connection-send #'ds-test--pause-after-handoff)))
    (ds-test-wait-lighter "\\` Debug\\[idle · user_turn r1\\]\\'")
    (debug-sidecar-proceed nil)
    (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r2]"))))

;;;; Turn state from another process: the agent's hooks

(defun ds-test-hook (event session &rest fields)
  "Run `debug-sidecar hook claude EVENT' as Claude Code does; return its stdout.
The input names SESSION and the workspace, with FIELDS (a plist) added;
it runs in the workspace, as a separate process."
  (let ((input (json-serialize
                (append (list :session_id session
                              :transcript_path "/tmp/transcript.jsonl"
                              :cwd (directory-file-name default-directory)
                              :hook_event_name event)
                        fields))))
    (with-temp-buffer
      (insert input)
      (let ((code (call-process-region (point-min) (point-max) ds-test-bin t t nil
                                       "hook" "claude" event)))
        (unless (eql code 0)
          (ert-fail (list "the hook failed" event code (buffer-string))))
        (buffer-string)))))

(defvar ds-test-heard nil "The `turn/stateChanged' params heard, newest first.")

(defun ds-test--hear (_conn method params)
  "Record PARAMS of a `turn/stateChanged' METHOD in `ds-test-heard'."
  (when (eq method 'turn/stateChanged)
    (push params ds-test-heard)))

(ert-deftest debug-sidecar-test-turn-state-from-hooks ()
  (ds-test-with-workspace
    (debug-sidecar-start "Checkout total ignores the 3-item discount.")
    ;; Claude Code names its own session in the hook input; the hooks act on
    ;; the workspace's latest debug session all the same: the one shown here.
    (let ((sid "claude-7f3c")
          (frames (append debug-sidecar-spinner-frames nil)))
      (should-not (equal sid (plist-get debug-sidecar--snapshot :sessionId)))
      ;; The person types a prompt: the hook gets the blackboard, and the
      ;; editor's own server announces the turn it recorded.
      (should (string-match-p "DEBUG MODE · round 1 · stage investigating"
                              (ds-test-hook "UserPromptSubmit" sid :prompt "Why is the total wrong?")))
      (let ((l1 (ds-test-wait-lighter "\\` Debug\\[. connecting… · investigating r1\\]\\'")))
        (should (member (substring l1 7 8) frames))
        (should debug-sidecar--spinner-timer)
        (ds-test-wait "the spinner to turn" (lambda () (not (equal (debug-sidecar-lighter) l1)))))
      (ds-test-hook "PreToolUse" sid :tool_name "Edit" :tool_input (make-hash-table))
      (let ((l2 (ds-test-wait-lighter "\\` Debug\\[. working… · investigating r1\\]\\'")))
        (should (member (substring l2 7 8) frames))
        (ds-test-capture "the agent edits a file (hooks in another process)" l2))
      ;; The agent hands over; its Stop hook ends the turn.
      (ds-test-agent 'debug/handOff '(:mode "reproduce" :steps ["Run `sh checkout.sh 1 2 3`."]))
      (should (equal (ds-test-hook "Stop" sid :stop_hook_active :false) ""))
      (ds-test-wait-lighter "\\` Debug\\[idle · user_turn r1\\]\\'")
      (should-not debug-sidecar--spinner-timer))))

(ert-deftest debug-sidecar-test-damaged-state-resets ()
  (ds-test-with-workspace
    (debug-sidecar-start "Checkout total ignores the 3-item discount.")
    (ds-test-agent 'debug/recordHypotheses
                   '(:hypotheses [(:id "H1" :statement "The check uses -gt." :status "open")]))
    (ds-test-wait "the hypothesis"
                  (lambda () (> (length (plist-get debug-sidecar--snapshot :hypotheses)) 0)))
    (should (> (plist-get debug-sidecar--snapshot :revision) 1))
    (let ((sid (plist-get debug-sidecar--snapshot :sessionId)))
      ;; Damaged on disk: the server moves it aside and the session starts over
      ;; at a lower revision, which the lighter must show all the same.
      (with-temp-file (expand-file-name
                       (format ".debug-sidecar/sessions/%s/state.json" sid) ws)
        (insert "{\"damaged"))
      (ds-test-wait-lighter "\\` Debug\\[idle · inactive\\]\\'")
      (ds-test-wait "the damage notice"
                    (lambda () (string-match-p "was damaged"
                                               (or debug-sidecar-last-notice ""))))
      (ds-test-capture "the saved state was damaged: mode line and echo area"
                       (concat (debug-sidecar-lighter) "\n" debug-sidecar-last-notice)))))

(ert-deftest debug-sidecar-test-other-session-activity ()
  (ds-test-with-workspace
    (debug-sidecar-start "Checkout total ignores the 3-item discount.")
    (let ((sid (plist-get debug-sidecar--snapshot :sessionId))
          (ds-test-heard nil))
      (advice-add 'debug-sidecar--dispatch-notification :before #'ds-test--hear)
      (unwind-protect
          (progn
            ;; Another session's agent starts a turn: the server relays it,
            ;; and the lighter, which shows this session, ignores it.
            (ds-test-agent 'debug/status '(:sessionId "other-agent"))
            (jsonrpc-notify ds-test-agent-conn 'turn/event
                            '(:kind "turnStart" :source "user" :sessionId "other-agent"))
            (ds-test-wait "the other session's turn to be announced"
                          (lambda () (cl-find "other-agent" ds-test-heard
                                              :key (lambda (p) (plist-get p :sessionId))
                                              :test #'equal)))
            (should (equal (debug-sidecar-lighter) " Debug[idle · investigating r1]"))
            (should-not debug-sidecar--spinner-timer)
            ;; This session's turn shows.
            (jsonrpc-notify ds-test-agent-conn 'turn/event
                            (list :kind "turnStart" :source "user" :sessionId sid))
            (ds-test-wait-lighter "\\` Debug\\[. connecting… · investigating r1\\]\\'"))
        (advice-remove 'debug-sidecar--dispatch-notification #'ds-test--hear)))))

(ert-deftest debug-sidecar-test-adopt-snapshot ()
  (let ((debug-sidecar--snapshot '(:sessionId "a" :active t)))
    (should (debug-sidecar--adopt-p '(:sessionId "a" :active :json-false)))
    (should (debug-sidecar--adopt-p '(:sessionId "b" :active t)))
    (should-not (debug-sidecar--adopt-p '(:sessionId "b" :active :json-false))))
  (let ((debug-sidecar--snapshot '(:sessionId "a" :active :json-false)))
    (should (debug-sidecar--adopt-p '(:sessionId "b" :active :json-false))))
  (let ((debug-sidecar--snapshot '(:sessionId "a")))
    (should (debug-sidecar--follows-p "a"))
    (should (debug-sidecar--follows-p nil))
    (should-not (debug-sidecar--follows-p "b"))))

(defun ds-test-agent-rows ()
  "The subagents buffer as a list of (STATE NAME TYPE WORK DETAIL)."
  (with-current-buffer "*debug-sidecar subagents*"
    (mapcar (lambda (e) (mapcar #'substring-no-properties (append (cadr e) nil)))
            tabulated-list-entries)))

(ert-deftest debug-sidecar-test-agent-entries ()
  (let ((id "7acaa35c-84ff-49b6-a85a-928411694f3b:0"))
    (should (equal (debug-sidecar--agent-name '(:id "Alpha" :description "count the items")) "Alpha"))
    (should (equal (debug-sidecar--agent-name (list :id id :description "count\tthe\nitems"))
                   "count the items"))
    (should (equal (debug-sidecar--agent-name (list :id id)) id))
    (let ((long (debug-sidecar--agent-name
                 (list :id id :description (apply #'concat (make-list 10 "check every item "))))))
      (should (= (string-width long) 60))
      (should (string-suffix-p "…" long)))
    (should (equal (mapcar #'substring-no-properties
                           (append (cadr (car (debug-sidecar--agent-entries
                                               (list (list :id id :status "error" :turns 1
                                                           :error "bad\e[2Jthing\nhappened")))))
                                   nil))
                   (list "error" id "" "1 turn" "bad [2Jthing happened")))))

(ert-deftest debug-sidecar-test-agents-buffer ()
  "The records a real pi-subagents session sent, on the agent's connection."
  (ds-test-with-workspace
    (let* ((fixture (or (getenv "DS_TEST_AGENTS_FIXTURE") (ert-skip "DS_TEST_AGENTS_FIXTURE is not set")))
           (events (with-temp-buffer
                     (insert-file-contents fixture)
                     (mapcar (lambda (line) (json-parse-string line :object-type 'plist :null-object nil))
                             (split-string (buffer-string) "\n" t))))
           (asked (cl-position-if (lambda (e) (let ((q (plist-get e :question)))
                                                (and (stringp q) (not (string-empty-p q)))))
                                  events))
           (work "\\`\\([0-9]+ tools? · \\)?[0-9]+ turns?\\'"))
      (should asked)
      (debug-sidecar-agents)
      (ds-test-agent 'debug/status nil)
      (dolist (e (cl-subseq events 0 (1+ asked)))
        (jsonrpc-notify ds-test-agent-conn 'agents/event e))
      (cl-flet ((shows (last)
                  (let ((rows (ds-test-agent-rows)))
                    (and (= (length rows) 4)
                         (cl-every (lambda (want)
                                     (cl-some (lambda (row)
                                                (and (equal (nth 0 row) (nth 0 want))
                                                     (equal (nth 1 row) (nth 1 want))
                                                     (equal (nth 2 row) "delegate")
                                                     (string-match-p work (nth 3 row))
                                                     (string-prefix-p (nth 2 want) (nth 4 row))))
                                              rows))
                                   (list '("completed" "CHILDS sum the prices" "Solo summed 12")
                                         '("completed" "CHILDA count the items" "Alpha counted 3 items")
                                         '("error" "CHILDB read the config" "Subagent produced no output")
                                         last))))))
        (ds-test-wait "three ended and one asking"
                      (lambda () (shows '("asks a question" "CHILDQ check the discount"
                                          "? Which file holds the discount?"))))
        (ds-test-capture "debug-sidecar-agents, one asking"
                         (ds-test-render (with-current-buffer "*debug-sidecar subagents*" (buffer-string))))
        (dolist (e (cl-subseq events (1+ asked)))
          (jsonrpc-notify ds-test-agent-conn 'agents/event e))
        (ds-test-wait "all four ended"
                      (lambda () (shows '("completed" "CHILDQ check the discount" "the discount is in cart.py"))))
        (should (string-match-p "Subagents: 4" (with-current-buffer "*debug-sidecar subagents*"
                                                 (format "%s" header-line-format))))))))

(ert-deftest debug-sidecar-test-keymap-prefix ()
  (unwind-protect
      (progn
        (should (eq (lookup-key debug-sidecar-mode-map (kbd "C-c ,")) 'debug-sidecar-command-map))
        (should (eq (lookup-key debug-sidecar-command-map "p") #'debug-sidecar-proceed))
        (customize-set-variable 'debug-sidecar-keymap-prefix "C-c d")
        (should (eq (lookup-key debug-sidecar-mode-map (kbd "C-c d")) 'debug-sidecar-command-map))
        (should-not (lookup-key debug-sidecar-mode-map (kbd "C-c ,")))
        (customize-set-variable 'debug-sidecar-keymap-prefix nil)
        (should-not (lookup-key debug-sidecar-mode-map (kbd "C-c d"))))
    (customize-set-variable 'debug-sidecar-keymap-prefix "C-c ,")))

(provide 'debug-sidecar-test)
;;; debug-sidecar-test.el ends here
