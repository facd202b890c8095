;;; debug-sidecar.el --- Evidence-first Debug Mode for coding agents  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The debug-sidecar authors
;; SPDX-License-Identifier: MIT OR Apache-2.0

;; Author: The debug-sidecar authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes, debugging

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The Emacs face of debug-sidecar: a coding agent debugs from runtime
;; evidence (hypotheses, probes that log JSON lines, a reproduction by
;; you), and `debug-sidecar serve' keeps whose turn it is, which probes
;; are on disk and which run a log line belongs to.  This package talks
;; to that server over the built-in `jsonrpc' library.
;;
;; M-x debug-sidecar-mode turns on the mode-line lighter, for example
;;
;;     Debug[⠹ thinking… · investigating r1]
;;
;; (the agent's turn state with a spinner while it is busy, the stage of
;; the debug session and its round).  Commands, also under the prefix
;; `debug-sidecar-keymap-prefix' (default C-c ,) while the mode is on:
;;
;;   s  `debug-sidecar-start'    start a session (asks for the problem)
;;   p  `debug-sidecar-proceed'  you reproduced: hand the round back
;;   f  `debug-sidecar-done'     mark the bug fixed (the agent cleans up)
;;   a  `debug-sidecar-abort'    abort the session
;;   P  `debug-sidecar-probes'   the probe ledger (RET visits a probe)
;;   l  `debug-sidecar-logs'     the current run's log lines, live
;;   A  `debug-sidecar-agents'   the agent's subagents, live
;;   i  `debug-sidecar-status'   where the session stands
;;   r  `debug-sidecar-restart'  restart the sidecar after it stopped
;;
;; When the agent hands the round to you, a buffer pops up with the
;; reproduction steps and the keys to proceed or mark the bug fixed.
;;
;; The server is `debug-sidecar-program' (default "debug-sidecar", found
;; on `exec-path'), started in the project root.  Its state lives on disk
;; in the workspace, so a restarted sidecar comes back at the same stage.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'tabulated-list)
(require 'url-util)

(defgroup debug-sidecar nil
  "Evidence-first Debug Mode for coding agents."
  :group 'tools
  :prefix "debug-sidecar-")

(defcustom debug-sidecar-program "debug-sidecar"
  "The debug-sidecar executable: a path, or a name found on variable `exec-path'."
  :type 'string)

(defcustom debug-sidecar-session-id nil
  "Session id sent in `initializationOptions', or nil for the server's choice.
Without one the server uses the workspace's most recently active
session, which is also the one an agent's MCP server and hooks use."
  :type '(choice (const :tag "The workspace's most recent session" nil)
                 string))

(defcustom debug-sidecar-state-dir nil
  "State directory sent in `initializationOptions', or nil for the default.
The default is `$DEBUG_SIDECAR_DIR', else <workspace>/.debug-sidecar."
  :type '(choice (const :tag "Default" nil) directory))

(defcustom debug-sidecar-request-timeout 30
  "Seconds to wait for an answer from the sidecar."
  :type 'number)

(defcustom debug-sidecar-events-buffer-size 200000
  "Characters kept in the buffer `*debug-sidecar events*'.
That buffer logs every message to and from the sidecar, for
debugging.  0 logs nothing; nil keeps everything (it grows while
Emacs runs)."
  :type '(choice (const :tag "Unlimited" nil) natnum))

(defcustom debug-sidecar-show-handoff t
  "Whether to pop up the hand-off buffer when the round becomes yours."
  :type 'boolean)

(defcustom debug-sidecar-proceed-asks-note t
  "Whether `debug-sidecar-proceed' asks what happened (an optional note)."
  :type 'boolean)

(defcustom debug-sidecar-kickoff-function #'debug-sidecar-kickoff-to-kill-ring
  "Function called with the kickoff text after start, proceed and done.
The kickoff is the message that starts the agent's turn.  An agent
connected through debug-sidecar's hooks or MCP server reads the state
itself; this is for agents you drive by hand.  nil does nothing."
  :type '(choice (const :tag "Copy it to the kill ring" debug-sidecar-kickoff-to-kill-ring)
                 (const :tag "Nothing" nil)
                 function))

(defcustom debug-sidecar-spinner-frames ["⠋" "⠙" "⠹" "⠸" "⠼" "⠴" "⠦" "⠧" "⠇" "⠏"]
  "Frames of the spinner shown in the lighter while the agent's turn runs."
  :type '(vector string))

(defcustom debug-sidecar-stage-change-hook nil
  "Hook run when the session's stage changes.
Each function gets the old stage, the new stage (strings or nil) and
the new snapshot (a plist)."
  :type 'hook)

(defface debug-sidecar-live '((t :inherit success))
  "Face for a probe the last scan found on disk.")
(defface debug-sidecar-issued '((t :inherit shadow))
  "Face for a probe issued but not yet seen on disk.")
(defface debug-sidecar-problem '((t :inherit warning))
  "Face for missing and half-removed probes.")
(defface debug-sidecar-foreign '((t :inherit error))
  "Face for probes no ledger of this session owns.")

;;;; State

(defvar debug-sidecar-mode)

(defvar debug-sidecar--conn nil "The `jsonrpc-process-connection' to the sidecar.")
(defvar debug-sidecar--root nil "The workspace directory the sidecar serves.")
(defvar debug-sidecar--status 'off
  "Connection status: `off', `connecting', `ready' or `stopped'.")
(defvar debug-sidecar--stop-reason nil "Why the sidecar stopped, as text.")
(defvar debug-sidecar--snapshot nil "The last session snapshot (a plist).")
(defvar debug-sidecar--turn nil "The agent's turn state, a plist (:state :label).")
(defvar debug-sidecar--bubble nil "The progress bubble (a plist) or nil.")
(defvar debug-sidecar--spinner-index 0)
(defvar debug-sidecar--spinner-timer nil)
(defvar debug-sidecar--closing nil "Non-nil while we shut the sidecar down on purpose.")
(defvar debug-sidecar-last-notice nil
  "The last notice shown to the person (hand-off, crash, error).")
(defvar debug-sidecar-last-kickoff nil "The last kickoff text the sidecar sent.")
(defvar debug-sidecar--wake-asked nil
  "The revision of this Emacs's Proceed or Mark fixed whose wake is awaited.")
(defvar debug-sidecar-last-error nil
  "The last error the sidecar answered: a plist (:code :message :data).")

(defconst debug-sidecar--handoff-buffer "*debug-sidecar*")
(defconst debug-sidecar--probes-buffer "*debug-sidecar probes*")
(defconst debug-sidecar--logs-buffer "*debug-sidecar logs*")
(defconst debug-sidecar--agents-buffer "*debug-sidecar subagents*")

;;;; Pure formatting (no process needed)

(defun debug-sidecar--busy-p (turn)
  "Non-nil when TURN (a plist with :state) is not idle."
  (let ((state (plist-get turn :state)))
    (and state (not (equal state "idle")))))

(defun debug-sidecar--format-lighter (status turn snapshot bubble frame)
  "The lighter text for connection STATUS, TURN, SNAPSHOT and BUBBLE.
FRAME is the spinner frame shown while the turn is busy."
  (pcase status
    ('off " Debug[not connected]")
    ('connecting " Debug[connecting]")
    ('stopped " Debug[stopped]")
    (_
     (let* ((busy (debug-sidecar--busy-p turn))
            (label (or (plist-get turn :label) "idle"))
            (stage (plist-get snapshot :stage))
            (round (plist-get snapshot :round))
            (percent (plist-get bubble :percent)))
       (concat " Debug["
               (if busy (concat frame " " label) label)
               " · "
               (if stage
                   (if round (format "%s r%s" stage round) stage)
                 "inactive")
               (if percent (format " · %s%%" percent) "")
               "]")))))

(defun debug-sidecar--stage-text (snapshot)
  "A short line saying where SNAPSHOT's session stands."
  (if (not (eq (plist-get snapshot :active) t))
      "no debug session is active"
    (let* ((stage (plist-get snapshot :stage))
           (probes (plist-get snapshot :probes))
           (live (or (plist-get probes :live) 0))
           (total (length (plist-get probes :list))))
      (format "round %s · %s%s · %d of %d probe%s on disk · run %s"
              (plist-get snapshot :round)
              (pcase stage
                ("investigating" "the agent investigates")
                ("user_turn" "your turn")
                ("cleaning_up" "the agent cleans up")
                (_ stage))
              (if (plist-get snapshot :handoff)
                  (format " (%s)" (plist-get snapshot :handoff))
                "")
              live total (if (= total 1) "" "s")
              (plist-get snapshot :runId)))))

(defun debug-sidecar--number-steps (lines)
  "Return LINES (strings) numbered, one per line.
A line the agent numbered itself keeps its number."
  (let ((i 0))
    (mapconcat (lambda (step)
                 (setq i (1+ i))
                 (if (string-match-p "\\`[0-9]+[.)] " step)
                     (concat "  " step)
                   (format "  %d. %s" i step)))
               lines "\n")))

(defun debug-sidecar--format-handoff (snapshot &optional keys)
  "The text shown when SNAPSHOT hands the round to the person.
KEYS is a plist (:proceed :done :abort) of key descriptions."
  (let* ((steps (append (plist-get snapshot :steps) nil))
         (pending (append (plist-get snapshot :pendingUserActions) nil))
         (mode (plist-get snapshot :handoff))
         (probes (plist-get snapshot :probes)))
    (concat
     (format "Debug Mode · round %s · your turn%s\n\n"
             (plist-get snapshot :round)
             (if mode (format " (%s)" mode) ""))
     (format "Problem: %s\n\n" (plist-get snapshot :problem))
     (if steps
         (concat (pcase mode
                   ("question" "The agent asks:\n")
                   ("capture" "Capture:\n")
                   ("incomplete" "The agent stopped without handing over; its last steps:\n")
                   (_ "Reproduce:\n"))
                 (debug-sidecar--number-steps steps) "\n\n")
       "")
     (if pending
         (concat "Still needed from you:\n"
                 (mapconcat
                  (lambda (req)
                    (format "  - %s (%s)%s"
                            (plist-get req :id)
                            (plist-get req :method)
                            (let ((ins (append (plist-get req :instructions) nil)))
                              (if ins (concat ": " (string-join ins " ")) ""))))
                  pending "\n")
                 "\n\n")
       "")
     (format "Probes on disk: %s · log: %s\n\n"
             (or (plist-get probes :live) 0)
             (or (plist-get snapshot :logFile) "none"))
     (format "Then: %s proceed (hand the round back) · %s mark fixed · %s abort\n"
             (or (plist-get keys :proceed) "M-x debug-sidecar-proceed")
             (or (plist-get keys :done) "M-x debug-sidecar-done")
             (or (plist-get keys :abort) "M-x debug-sidecar-abort")))))

(defun debug-sidecar--location (file line)
  "FILE:LINE, or FILE when LINE is nil."
  (if line (format "%s:%s" file line) (or file "")))

(defun debug-sidecar--probe-entries (result)
  "Tabulated list entries for RESULT, the answer of `debug/probes'.
Each id is a plist (:file :line); the columns are Probe, Hypothesis,
State and Location.  A probe of the ledger whose markers are
half-removed in its file is one row, at the marker left."
  (let ((half (append (plist-get result :halfRemoved) nil))
        (untracked (append (plist-get result :untracked) nil))
        rows)
    (dolist (p (append (plist-get result :probes) nil))
      (let* ((state (plist-get p :state))
             (h (cl-find-if (lambda (h) (and (equal (plist-get h :probeId) (plist-get p :id))
                                             (equal (plist-get h :file) (plist-get p :file))))
                            half))
             (line (if h (plist-get h :line) (plist-get p :line)))
             (text (concat (if h "half-removed" state)
                           (if (member (plist-get p :id) untracked) " (adopted)" ""))))
        (setq half (delq h half))
        (push (list (list :file (plist-get p :file) :line line)
                    (vector (plist-get p :id)
                            (or (plist-get p :hypothesisId) "")
                            (propertize text
                                        'face (cond (h 'debug-sidecar-problem)
                                                    ((equal state "live") 'debug-sidecar-live)
                                                    ((equal state "missing") 'debug-sidecar-problem)
                                                    (t 'debug-sidecar-issued)))
                            (debug-sidecar--location (plist-get p :file) line)))
              rows)))
    (dolist (h half)
      (push (list (list :file (plist-get h :file) :line (plist-get h :line))
                  (vector (plist-get h :probeId) ""
                          (propertize "half-removed" 'face 'debug-sidecar-problem)
                          (debug-sidecar--location (plist-get h :file)
                                                   (plist-get h :line))))
            rows))
    (dolist (f (append (plist-get result :foreign) nil))
      (push (list (list :file (plist-get f :file) :line (plist-get f :line))
                  (vector "-" ""
                          (propertize (concat "foreign: "
                                              (pcase (plist-get f :kind)
                                                ("cursorAgentLog" "Cursor agent log")
                                                ("ingestUrl" "ingest URL")
                                                ("otherSession" "other session")
                                                (k k)))
                                      'face 'debug-sidecar-foreign)
                          (debug-sidecar--location (plist-get f :file)
                                                   (plist-get f :line))))
            rows))
    (nreverse rows)))

(defun debug-sidecar--probes-summary (result)
  "One line counting RESULT's probes by state."
  (let ((probes (append (plist-get result :probes) nil)))
    (format "%d live · %d issued · %d missing · %d half-removed · %d foreign"
            (or (plist-get result :live) 0)
            (cl-count "issued" probes :key (lambda (p) (plist-get p :state)) :test #'equal)
            (cl-count "missing" probes :key (lambda (p) (plist-get p :state)) :test #'equal)
            (length (plist-get result :halfRemoved))
            (length (plist-get result :foreign)))))

(defun debug-sidecar--json (value)
  "Return VALUE, as read by `jsonrpc', as compact JSON text."
  (condition-case nil
      (json-serialize value :null-object nil :false-object :json-false)
    (error (format "%S" value))))

(defun debug-sidecar--format-log-entry (item &optional zone)
  "One line for ITEM, an entry `(:line N :entry OBJ)' of `debug/logs'.
Times are shown in ZONE (default local time)."
  (let* ((line (plist-get item :line))
         (e (plist-get item :entry))
         (obj (and (consp e) (keywordp (car e)))))
    (if (not obj)
        (format "%5s  %s" line (debug-sidecar--json e))
      (let* ((ts (plist-get e :timestamp))
             (time (if (numberp ts)
                       (concat (format-time-string "%H:%M:%S" (/ ts 1000.0) zone)
                               (format ".%03d" (mod (truncate ts) 1000)))
                     "--:--:--.---"))
             (data (plist-get e :data)))
        (string-trim-right
         (format "%5s  %s  %-4s %-4s %s  %s  %s"
                 line time
                 (or (plist-get e :probeId) "-")
                 (or (plist-get e :hypothesisId) "-")
                 (or (plist-get e :location) "")
                 (or (plist-get e :message) "")
                 (if data (debug-sidecar--json data) "")))))))

;;;; Mode line

(defvar debug-sidecar-mode-line
  '(:eval (debug-sidecar--mode-line-string))
  "Mode-line construct of `debug-sidecar-mode'.")
(put 'debug-sidecar-mode-line 'risky-local-variable t)

(defun debug-sidecar-lighter ()
  "The lighter text as shown now."
  (debug-sidecar--format-lighter
   debug-sidecar--status debug-sidecar--turn debug-sidecar--snapshot
   debug-sidecar--bubble
   (aref debug-sidecar-spinner-frames
         (mod debug-sidecar--spinner-index (length debug-sidecar-spinner-frames)))))

(defun debug-sidecar--mode-line-string ()
  "The lighter with its help text."
  (propertize (debug-sidecar-lighter)
              'help-echo (pcase debug-sidecar--status
                           ('stopped (format "The debug sidecar stopped (%s); run M-x debug-sidecar-restart"
                                             debug-sidecar--stop-reason))
                           ('ready (concat (debug-sidecar--stage-text debug-sidecar--snapshot)
                                           (when-let ((b debug-sidecar--bubble))
                                             (concat "\n" (plist-get b :title)))))
                           (_ "debug-sidecar: M-x debug-sidecar-start"))))

(defun debug-sidecar--update-spinner ()
  "Run the spinner while the agent's turn is busy, stop it otherwise."
  (if (and (eq debug-sidecar--status 'ready)
           (debug-sidecar--busy-p debug-sidecar--turn))
      (unless debug-sidecar--spinner-timer
        (setq debug-sidecar--spinner-timer
              (run-with-timer 0.12 0.12 #'debug-sidecar--spin)))
    (when debug-sidecar--spinner-timer
      (cancel-timer debug-sidecar--spinner-timer)
      (setq debug-sidecar--spinner-timer nil)))
  (force-mode-line-update t))

(defun debug-sidecar--spin ()
  "Advance the spinner by one frame."
  (setq debug-sidecar--spinner-index (1+ debug-sidecar--spinner-index))
  (force-mode-line-update t))

;;;; Notices

(defun debug-sidecar--notify (format-string &rest args)
  "Show FORMAT-STRING with ARGS to the person and remember it."
  (let ((text (apply #'format format-string args)))
    (setq debug-sidecar-last-notice text)
    (message "%s" text)))

(defun debug-sidecar-kickoff-to-kill-ring (text)
  "Put the kickoff TEXT on the kill ring, for an agent driven by hand."
  (kill-new text))

(defun debug-sidecar--kickoff (result)
  "Hand RESULT's kickoff to `debug-sidecar-kickoff-function'."
  (when-let ((text (plist-get result :kickoff)))
    (setq debug-sidecar-last-kickoff text)
    (when debug-sidecar-kickoff-function
      (funcall debug-sidecar-kickoff-function text))))

(defun debug-sidecar--key (command)
  "Return the key of COMMAND as text (or M-x and its name)."
  (substitute-command-keys (format "\\[%s]" command)))

;;;; Session state

(defvar debug-sidecar--heard (make-hash-table :test #'equal)
  "The revision of each session's last `debug/stateChanged'.")

(defun debug-sidecar--apply-snapshot (snap &optional notified)
  "Take SNAP as the session's state unless it is older than the one held.
NOTIFIED is non-nil for a `debug/stateChanged' notification.  The
server sends those in the order of the changes, so one whose revision
goes back means the session was reset (its saved state damaged and
moved aside, or deleted) and is taken; so is one with a new warning."
  (let* ((old debug-sidecar--snapshot)
         (old-rev (plist-get old :revision))
         (new-rev (plist-get snap :revision))
         (id (plist-get snap :sessionId))
         (heard (gethash id debug-sidecar--heard)))
    (when (and notified (numberp new-rev))
      (puthash id new-rev debug-sidecar--heard))
    (when (or (null old)
              (not (equal (plist-get old :sessionId) id))
              (null old-rev) (null new-rev) (>= new-rev old-rev)
              (and notified
                   (or (and (numberp heard) (< new-rev heard))
                       (and (plist-get snap :warning)
                            (not (equal (plist-get snap :warning)
                                        (plist-get old :warning)))))))
      (setq debug-sidecar--snapshot snap)
      (let ((old-stage (plist-get old :stage))
            (new-stage (plist-get snap :stage)))
        (unless (equal old-stage new-stage)
          (run-hook-with-args 'debug-sidecar-stage-change-hook old-stage new-stage snap))
        (when (and (equal new-stage "user_turn")
                   (or (not (equal old-stage "user_turn"))
                       (not (equal (plist-get old :round) (plist-get snap :round)))
                       (not (equal (plist-get old :steps) (plist-get snap :steps)))))
          (debug-sidecar--announce-user-turn snap))
        (let ((warning (plist-get snap :warning)))
          (if (and (stringp warning)
                   (not (equal warning (plist-get old :warning))))
              ;; Something about the saved state the person must know, such
              ;; as a damaged file moved aside.
              (debug-sidecar--notify "Debug sidecar: %s" warning)
            (when (and old (eq (plist-get old :active) t)
                       (not (eq (plist-get snap :active) t)))
              (debug-sidecar--notify "Debug session ended."))))
        (unless (equal (plist-get old :runId) (plist-get snap :runId))
          (debug-sidecar--logs-run-changed (plist-get snap :runId)))
        (when (and old (not (equal (plist-get old :sessionId) (plist-get snap :sessionId))))
          (debug-sidecar--refresh-activity (plist-get snap :sessionId))))
      (force-mode-line-update t))))

(defun debug-sidecar--refresh-activity (session-id)
  "Read the turn state and progress of SESSION-ID, newly shown, without blocking."
  (when-let ((conn (debug-sidecar-connection)))
    (setq debug-sidecar--turn nil
          debug-sidecar--bubble nil)
    (debug-sidecar--update-spinner)
    (dolist (method '(turn/state progress/state))
      (jsonrpc-async-request
       conn method (list :sessionId session-id)
       :success-fn
       (lambda (result)
         (when (equal session-id (plist-get debug-sidecar--snapshot :sessionId))
           (if (eq method 'turn/state)
               (progn (setq debug-sidecar--turn result)
                      (debug-sidecar--update-spinner))
             (setq debug-sidecar--bubble result)
             (force-mode-line-update t))))
       :error-fn #'ignore
       :timeout-fn #'ignore))))

(defun debug-sidecar--announce-user-turn (snap)
  "Tell the person the round is theirs; SNAP has what to reproduce."
  (let ((steps (length (plist-get snap :steps))))
    (debug-sidecar--notify
     "Debug: your turn (round %s): %s; then %s to proceed or %s if it is fixed."
     (plist-get snap :round)
     (if (> steps 0)
         (format "%d step%s to reproduce" steps (if (= steps 1) "" "s"))
       "see the hand-off")
     (debug-sidecar--key 'debug-sidecar-proceed)
     (debug-sidecar--key 'debug-sidecar-done))
    (when debug-sidecar-show-handoff
      (debug-sidecar--show-handoff snap))))

(defvar debug-sidecar-handoff-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "p" #'debug-sidecar-proceed)
    (define-key map "f" #'debug-sidecar-done)
    (define-key map "a" #'debug-sidecar-abort)
    (define-key map "l" #'debug-sidecar-logs)
    (define-key map "P" #'debug-sidecar-probes)
    (define-key map "g" #'debug-sidecar-status)
    map)
  "Keys of the hand-off buffer.")

(define-derived-mode debug-sidecar-handoff-mode special-mode "Debug-Handoff"
  "The round is yours: reproduce, then proceed or mark the bug fixed.
\\{debug-sidecar-handoff-mode-map}")

(defun debug-sidecar--show-handoff (snap)
  "Show SNAP's hand-off in the buffer `*debug-sidecar*'."
  (let ((buf (get-buffer-create debug-sidecar--handoff-buffer)))
    (with-current-buffer buf
      (debug-sidecar-handoff-mode)
      (when debug-sidecar--root (setq default-directory debug-sidecar--root))
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (debug-sidecar--format-handoff
                 snap '(:proceed "p" :done "f" :abort "a")))
        (insert "      l logs · P probes · g refresh · q close\n")
        (goto-char (point-min))))
    (display-buffer buf '((display-buffer-reuse-window display-buffer-below-selected)
                          (window-height . fit-window-to-buffer)))
    buf))

;;;; Connection

(defun debug-sidecar--project-root ()
  "The directory to serve: the current project's root, else `default-directory'."
  (file-name-as-directory
   (expand-file-name
    (if-let ((project (project-current nil)))
        (project-root project)
      default-directory))))

(defun debug-sidecar--program ()
  "The absolute path of `debug-sidecar-program', or a `user-error'."
  (let* ((prog debug-sidecar-program)
         (path (if (file-name-directory prog)
                   (let ((abs (expand-file-name prog)))
                     (and (file-executable-p abs) (not (file-directory-p abs)) abs))
                 (executable-find prog))))
    (or path
        (if (file-name-directory prog)
            (user-error "The debug-sidecar program \"%s\" was not found.  Install it (`cargo install --path .' in the debug-sidecar repository) or set `debug-sidecar-program' to its full path"
                        prog)
          (user-error "The debug-sidecar program \"%s\" was not found on `exec-path'.  Install it (`cargo install --path .' in the debug-sidecar repository) or set `debug-sidecar-program' to its full path"
                      prog)))))

(defun debug-sidecar--file-uri (dir)
  "DIR as a file:// URI."
  (concat "file://"
          (url-hexify-string (directory-file-name (expand-file-name dir))
                             url-path-allowed-chars)))

(defun debug-sidecar--empty ()
  "An empty JSON object."
  (make-hash-table))

(defun debug-sidecar--connect (root)
  "Start `debug-sidecar serve' in ROOT and initialize it."
  (let* ((program (debug-sidecar--program))
         (default-directory root)
         (conn nil))
    (setq debug-sidecar--root root
          debug-sidecar--status 'connecting
          debug-sidecar--stop-reason nil
          debug-sidecar--snapshot nil
          debug-sidecar--turn nil
          debug-sidecar--bubble nil)
    (clrhash debug-sidecar--heard)
    (force-mode-line-update t)
    (condition-case err
        (progn
          (setq conn
                (jsonrpc-process-connection
                 :name "debug-sidecar"
                 :process (lambda ()
                            (make-process
                             :name "debug-sidecar"
                             :command (list program "serve")
                             :connection-type 'pipe
                             :coding 'utf-8-emacs-unix
                             :noquery t
                             :stderr (get-buffer-create "*debug-sidecar stderr*")))
                 :events-buffer-scrollback-size debug-sidecar-events-buffer-size
                 :notification-dispatcher #'debug-sidecar--dispatch-notification
                 :request-dispatcher #'debug-sidecar--dispatch-request
                 :on-shutdown #'debug-sidecar--on-shutdown))
          (setq debug-sidecar--conn conn)
          (debug-sidecar--jsonrpc-request
           conn 'initialize
           (list :processId (emacs-pid)
                 :clientInfo (list :name "debug-sidecar.el" :version "0.1.0")
                 :rootUri (debug-sidecar--file-uri root)
                 :workspaceFolders
                 (vector (list :uri (debug-sidecar--file-uri root)
                               :name (file-name-nondirectory
                                      (directory-file-name root))))
                 :capabilities (debug-sidecar--empty)
                 :initializationOptions
                 (let (opts)
                   (when debug-sidecar-state-dir
                     (setq opts (plist-put opts :stateDir
                                           (expand-file-name debug-sidecar-state-dir))))
                   (when debug-sidecar-session-id
                     (setq opts (plist-put opts :sessionId debug-sidecar-session-id)))
                   (or opts (debug-sidecar--empty)))))
          (jsonrpc-notify conn 'initialized (debug-sidecar--empty))
          (setq debug-sidecar--status 'ready)
          (debug-sidecar--apply-snapshot
           (debug-sidecar--jsonrpc-request conn 'debug/status (debug-sidecar--empty)))
          (setq debug-sidecar--turn
                (debug-sidecar--jsonrpc-request conn 'turn/state (debug-sidecar--empty)))
          (setq debug-sidecar--bubble
                (debug-sidecar--jsonrpc-request conn 'progress/state (debug-sidecar--empty)))
          (debug-sidecar--update-spinner)
          conn)
      (error
       (let ((proc (and conn (jsonrpc--process conn))))
         (cond
          ((null proc))
          ((process-live-p proc)
           (let ((debug-sidecar--closing t))
             (ignore-errors (jsonrpc-shutdown conn t))))
          (t
           ;; It died: let its sentinel run, then say how it ended.
           (debug-sidecar--await-sentinel conn)
           (unless debug-sidecar--stop-reason
             (setq debug-sidecar--stop-reason (debug-sidecar--exit-reason proc))))))
       (setq debug-sidecar--conn nil
             debug-sidecar--status 'off)
       (force-mode-line-update t)
       (user-error "Could not start `%s serve' in %s: %s"
                   program root
                   (cond
                    (debug-sidecar--stop-reason
                     (format "it %s" debug-sidecar--stop-reason))
                    ((alist-get 'jsonrpc-error-message (cdr-safe err)))
                    (t (error-message-string err))))))))

(defun debug-sidecar--await-sentinel (conn)
  "Wait up to a second for the sentinel of CONN's dead process to run.
A process can be known dead (its status is read when the child is
reaped) before its sentinel runs, which records why it ended."
  (let ((proc (jsonrpc--process conn)))
    (with-timeout (1 nil)
      (while (not (process-get proc 'jsonrpc-sentinel-cleanup-started))
        (accept-process-output nil 0.02)))))

(defun debug-sidecar--dispatch-request (_conn method _params)
  "The sidecar sends no requests; refuse METHOD."
  (jsonrpc-error :code -32601 :message (format "%s is not handled" method)))

(defun debug-sidecar--follows-p (session-id)
  "Non-nil when a notification about SESSION-ID concerns the session shown.
The server announces every session of the workspace; the lighter and
the logs follow the session of the last snapshot."
  (let ((ours (plist-get debug-sidecar--snapshot :sessionId)))
    (or (null ours) (null session-id) (equal ours session-id))))

(defun debug-sidecar--adopt-p (snap)
  "Non-nil when SNAP, announced by the server, should be the state shown.
A snapshot of the session shown is taken (revisions permitting).  One
of another session of the workspace is taken when it is active or the
shown one is not: the server then picks it for requests without a
session id (the workspace's most recently active session)."
  (let ((old debug-sidecar--snapshot))
    (or (debug-sidecar--follows-p (plist-get snap :sessionId))
        (eq (plist-get snap :active) t)
        (not (eq (plist-get old :active) t)))))

(defun debug-sidecar--dispatch-notification (conn method params)
  "Handle notification METHOD with PARAMS from CONN."
  (when (eq conn debug-sidecar--conn)
    (pcase method
      ('debug/stateChanged
       (when (debug-sidecar--adopt-p params)
         (debug-sidecar--apply-snapshot params t)))
      ('turn/stateChanged
       (when (debug-sidecar--follows-p (plist-get params :sessionId))
         (setq debug-sidecar--turn params)
         (debug-sidecar--update-spinner)))
      ('progress/changed
       (when (debug-sidecar--follows-p (plist-get params :sessionId))
         (setq debug-sidecar--bubble (plist-get params :bubble))
         (force-mode-line-update t)))
      ('debug/logAppended
       (when (debug-sidecar--follows-p (plist-get params :sessionId))
         (debug-sidecar--logs-follow (plist-get params :run) (plist-get params :cursor))))
      ('agents/changed
       (debug-sidecar--agents-changed params))
      ('debug/wakeChanged
       (when (and debug-sidecar--wake-asked
                  (equal (plist-get params :revision) debug-sidecar--wake-asked))
         (setq debug-sidecar--wake-asked nil)
         (debug-sidecar--notify "%s" (plist-get params :message))))
      (_ nil))))

(defun debug-sidecar--tell-wake (result)
  "Say RESULT's line on waking the agent, if the command asked for one."
  (when-let ((wake (plist-get result :wake)))
    (setq debug-sidecar--wake-asked
          (and (equal (plist-get wake :state) "waiting") (plist-get wake :revision)))
    (debug-sidecar--notify "%s" (plist-get wake :message))))

(defun debug-sidecar--exit-reason (proc)
  "Why PROC ended, as text."
  (pcase (process-status proc)
    ('signal (format "killed by signal %d" (process-exit-status proc)))
    ('exit (format "exited with status %d" (process-exit-status proc)))
    (s (format "%s" s))))

(defun debug-sidecar--on-shutdown (conn)
  "CONN's process died: say so unless we stopped it."
  (when (eq conn debug-sidecar--conn)
    (setq debug-sidecar--conn nil)
    (cond
     (debug-sidecar--closing (setq debug-sidecar--status 'off))
     ((eq debug-sidecar--status 'connecting)
      ;; `debug-sidecar--connect' reports it.
      (setq debug-sidecar--stop-reason
            (debug-sidecar--exit-reason (jsonrpc--process conn))))
     (t
      (setq debug-sidecar--status 'stopped
            debug-sidecar--stop-reason
            (debug-sidecar--exit-reason (jsonrpc--process conn)))
      (debug-sidecar--notify
       "The debug sidecar stopped (%s); run M-x debug-sidecar-restart to restart it (the session is on disk)"
       debug-sidecar--stop-reason)))
    (debug-sidecar--update-spinner)))

(defun debug-sidecar--stopped-error (&optional conn)
  "Signal that the sidecar is not running.
CONN, a connection whose process died, is given time to say why."
  (when conn
    (debug-sidecar--await-sentinel conn)
    (when (eq conn debug-sidecar--conn)
      ;; The sentinel still has not run: record the stop here.
      (setq debug-sidecar--conn nil
            debug-sidecar--status 'stopped
            debug-sidecar--stop-reason (debug-sidecar--exit-reason (jsonrpc--process conn)))
      (debug-sidecar--update-spinner)))
  (user-error "The debug sidecar stopped (%s); run M-x debug-sidecar-restart to restart it"
              (or debug-sidecar--stop-reason "not running")))

(defun debug-sidecar--ensure (&optional root)
  "The live connection, started in the project root when there is none.
With ROOT, a connection serving another directory is replaced by one
serving ROOT (the other workspace's session stays on disk)."
  (when (and root debug-sidecar--root
             (not (file-equal-p root debug-sidecar--root))
             (debug-sidecar-connection))
    (debug-sidecar--shutdown))
  (cond
   ((debug-sidecar-connection))
   ;; Its process died and its sentinel has not run yet.
   (debug-sidecar--conn (debug-sidecar--stopped-error debug-sidecar--conn))
   ((eq debug-sidecar--status 'stopped) (debug-sidecar--stopped-error))
   (t
    (unless debug-sidecar-mode (debug-sidecar-mode 1))
    (debug-sidecar--connect (or root (debug-sidecar--project-root))))))

(defun debug-sidecar-connection ()
  "The live `jsonrpc' connection to the sidecar, or nil."
  (and debug-sidecar--conn (jsonrpc-running-p debug-sidecar--conn) debug-sidecar--conn))

(defun debug-sidecar--drain (conn)
  "Handle the messages still waiting in CONN's process buffer.
`jsonrpc-request' leaves the process filter by a `throw' as soon as
its answer is read; in jsonrpc 1.0.14 (Emacs 28) the messages that
arrived behind the answer in the same read (notifications) then wait
until the process writes again.  Running the filter on no new text
handles them now."
  (let ((proc (and conn (jsonrpc--process conn))))
    (when (and proc (process-live-p proc) (buffer-live-p (process-buffer proc)))
      (funcall (process-filter proc) proc ""))))

(defun debug-sidecar--jsonrpc-request (conn method params)
  "`jsonrpc-request' of METHOD with PARAMS on CONN, then `debug-sidecar--drain'."
  (unwind-protect
      (jsonrpc-request conn method params :timeout debug-sidecar-request-timeout)
    (debug-sidecar--drain conn)))

(defun debug-sidecar--request (method &optional params root)
  "Send METHOD with PARAMS to the sidecar and return its result.
An error answer becomes a `user-error' with the server's message.
ROOT is passed to `debug-sidecar--ensure'."
  (let ((conn (debug-sidecar--ensure root)))
    (condition-case err
        (debug-sidecar--jsonrpc-request conn method (or params (debug-sidecar--empty)))
      (jsonrpc-error
       (let ((code (alist-get 'jsonrpc-error-code (cdr err)))
             (msg (alist-get 'jsonrpc-error-message (cdr err)))
             (data (alist-get 'jsonrpc-error-data (cdr err))))
         (setq debug-sidecar-last-error (list :code code :message msg :data data))
         (if (or (eql code -1) (not (jsonrpc-running-p conn)))
             (debug-sidecar--stopped-error conn)
           (let ((text (cond
                        ;; Refusals (-32050) and the like are written for people.
                        ((and code msg) msg)
                        (code (format "The sidecar answered %s with error %s" method code))
                        (t (format "The sidecar did not answer %s in time (%s)"
                                   method (or msg "no answer"))))))
             (setq debug-sidecar-last-notice text)
             (user-error "%s" text)))))
      (error
       ;; Writing to a process that died a moment ago.
       (if (jsonrpc-running-p conn)
           (signal (car err) (cdr err))
         (debug-sidecar--stopped-error conn))))))

(defun debug-sidecar--shutdown ()
  "Stop the sidecar cleanly (shutdown, then exit) if it is running."
  (let ((conn debug-sidecar--conn)
        (debug-sidecar--closing t))
    (when (and conn (jsonrpc-running-p conn))
      (ignore-errors (jsonrpc-request conn 'shutdown nil :timeout 5))
      (ignore-errors (jsonrpc-notify conn 'exit nil))
      (with-timeout (5 nil)
        (while (jsonrpc-running-p conn)
          (accept-process-output (jsonrpc--process conn) 0.05)))
      (ignore-errors (jsonrpc-shutdown conn t)))
    (setq debug-sidecar--conn nil
          debug-sidecar--status 'off)
    (debug-sidecar--update-spinner)))

;;;; Commands

(defun debug-sidecar-request (method &optional params)
  "Send the request METHOD (a symbol such as `debug/probeSnippet') with PARAMS.
PARAMS is a plist (nil for none).  Return the result; an error answer
becomes a `user-error' with the server's message.  For code that acts
as the agent through this connection; the commands below are the
person's side.  A snapshot in the result becomes the session's state."
  (let* ((result (debug-sidecar--request method params))
         (snap (and (consp result) (debug-sidecar--snapshot-of result))))
    (when (and (consp snap) (plist-member snap :revision))
      (debug-sidecar--apply-snapshot snap))
    result))

(defun debug-sidecar--snapshot-of (result)
  "The snapshot inside RESULT (bare, or under :snapshot)."
  (if (plist-member result :stage) result (plist-get result :snapshot)))

(defun debug-sidecar--legal-p (command)
  "Non-nil when the last snapshot lists COMMAND (\"proceed\"...) as possible now.
The server stays the judge: a command is sent anyway, and its refusal
shown; this only spares the person a prompt for a refused command."
  (member command (append (plist-get debug-sidecar--snapshot :userCommands) nil)))

;;;###autoload
(defun debug-sidecar-start (problem)
  "Start a debug session about PROBLEM; the agent has the first turn."
  (interactive
   (progn (debug-sidecar--ensure (debug-sidecar--project-root))
          (list (if (debug-sidecar--legal-p "start")
                    (read-string "Debug which problem? ")
                  ""))))
  (debug-sidecar--ensure (debug-sidecar--project-root))
  (when (and (string-empty-p (string-trim problem)) (debug-sidecar--legal-p "start"))
    (user-error "Describe the problem to start a debug session"))
  (let ((result (debug-sidecar--request 'debug/start (list :problem problem)
                                        (debug-sidecar--project-root))))
    (debug-sidecar--apply-snapshot (debug-sidecar--snapshot-of result))
    (debug-sidecar--kickoff result)
    (debug-sidecar--notify "Debug session started (round %s): the agent investigates, then hands you steps."
                           (plist-get result :round))
    result))

;;;###autoload
(defun debug-sidecar-proceed (&optional note)
  "You reproduced: hand the round back to the agent, with an optional NOTE."
  (interactive
   (progn (debug-sidecar--ensure)
          (list (and debug-sidecar-proceed-asks-note
                     (debug-sidecar--legal-p "proceed")
                     (read-string "What happened (optional): ")))))
  (let ((result (debug-sidecar--request
                 'debug/proceed
                 (if (and note (not (string-empty-p note))) (list :note note) nil))))
    (debug-sidecar--apply-snapshot (debug-sidecar--snapshot-of result))
    (debug-sidecar--kickoff result)
    (debug-sidecar--close-handoff)
    (debug-sidecar--notify "Proceeding: round %s is the agent's (run %s)."
                           (plist-get result :round) (plist-get result :runId))
    (debug-sidecar--tell-wake result)
    result))

;;;###autoload
(defun debug-sidecar-done (&optional note)
  "Mark the bug fixed, with an optional NOTE; the agent then cleans up.
With a prefix argument, ask for the note."
  (interactive (list (and current-prefix-arg (read-string "Note (optional): "))))
  (let ((result (debug-sidecar--request
                 'debug/done
                 (if (and note (not (string-empty-p note))) (list :note note) nil))))
    (debug-sidecar--apply-snapshot (debug-sidecar--snapshot-of result))
    (debug-sidecar--kickoff result)
    (debug-sidecar--close-handoff)
    (debug-sidecar--notify "Marked fixed: the agent removes its %s probe(s); the session ends once none is left."
                           (or (plist-get (plist-get result :probes) :live) 0))
    (debug-sidecar--tell-wake result)
    result))

;;;###autoload
(defun debug-sidecar-mark (words)
  "Mark this moment of the run with WORDS, what you saw just now.
Like \"it froze right after Save\": the agent's summary of the run lists
the mark by line."
  (interactive (progn (debug-sidecar--ensure)
                      (list (read-string "What happened just now: "))))
  (let ((result (debug-sidecar--request 'debug/mark (list :words (or words "")))))
    (debug-sidecar--notify "%s" (plist-get result :message))
    result))

;;;###autoload
(defun debug-sidecar-abort (&optional confirmed)
  "Abort the debug session.  Asks first unless CONFIRMED."
  (interactive
   (progn (debug-sidecar--ensure)
          (list (or (not (debug-sidecar--legal-p "abort"))
                    (yes-or-no-p "Abort the debug session? ")))))
  (when confirmed
    (let* ((result (debug-sidecar--request 'debug/abort))
           (left (append (plist-get result :leftoverProbes) nil)))
      (debug-sidecar--apply-snapshot (plist-get result :snapshot))
      (debug-sidecar--close-handoff)
      (debug-sidecar--notify
       "Debug session aborted.%s"
       (if left
           (format "  Probes still on disk: %s"
                   (mapconcat (lambda (p)
                                (format "%s (%s)" (plist-get p :id)
                                        (debug-sidecar--location (plist-get p :file)
                                                                 (plist-get p :line))))
                              left ", "))
         ""))
      result)))

;;;###autoload
(defun debug-sidecar-status ()
  "Say where the debug session stands; show the hand-off when it is your turn."
  (interactive)
  (let ((snap (debug-sidecar--request 'debug/status)))
    (debug-sidecar--apply-snapshot snap)
    (setq debug-sidecar--turn (debug-sidecar--request 'turn/state))
    (debug-sidecar--update-spinner)
    (when (and (equal (plist-get snap :stage) "user_turn") debug-sidecar-show-handoff)
      (debug-sidecar--show-handoff snap))
    (debug-sidecar--notify "debug-sidecar: %s; agent %s."
                           (debug-sidecar--stage-text snap)
                           (or (plist-get debug-sidecar--turn :label) "idle"))
    snap))

;;;###autoload
(defun debug-sidecar-restart ()
  "Restart the sidecar; the session comes back from disk at the same stage."
  (interactive)
  (let ((root (or debug-sidecar--root (debug-sidecar--project-root))))
    (debug-sidecar--shutdown)
    (unless debug-sidecar-mode (debug-sidecar-mode 1))
    (debug-sidecar--connect root)
    (debug-sidecar--notify "debug-sidecar restarted: %s."
                           (debug-sidecar--stage-text debug-sidecar--snapshot))))

(defun debug-sidecar-shutdown ()
  "Stop the sidecar process (the session stays on disk)."
  (interactive)
  (debug-sidecar--shutdown))

(defun debug-sidecar--close-handoff ()
  "Close the hand-off buffer's windows once the round is no longer the person's."
  (when-let ((buf (get-buffer debug-sidecar--handoff-buffer)))
    (dolist (win (get-buffer-window-list buf nil t))
      (ignore-errors (quit-window nil win)))))

;;;; Probes buffer

(defvar debug-sidecar-probes-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'debug-sidecar-probes-visit)
    (define-key map "g" #'debug-sidecar-probes)
    map)
  "Keys of the probe ledger buffer.")

(define-derived-mode debug-sidecar-probes-mode tabulated-list-mode "Debug-Probes"
  "The probe ledger: RET visits a probe, g rescans.
\\{debug-sidecar-probes-mode-map}"
  (setq tabulated-list-format [("Probe" 6 t)
                               ("Hypothesis" 11 t)
                               ("State" 26 t)
                               ("Location" 0 t)])
  (setq tabulated-list-padding 1)
  ;; The column names go in the buffer; the header line counts the probes.
  (setq-local tabulated-list-use-header-line nil)
  (tabulated-list-init-header))

(defvar-local debug-sidecar--probes-root nil)

;;;###autoload
(defun debug-sidecar-probes ()
  "Rescan the workspace and list the probes (RET visits one)."
  (interactive)
  (let* ((result (debug-sidecar--request 'debug/probes (list :rescan t)))
         (root debug-sidecar--root)
         (buf (get-buffer-create debug-sidecar--probes-buffer)))
    (with-current-buffer buf
      (debug-sidecar-probes-mode)
      (setq debug-sidecar--probes-root root
            default-directory root)
      (setq tabulated-list-entries (debug-sidecar--probe-entries result))
      (tabulated-list-print t)
      (setq header-line-format
            (concat " Probes: " (debug-sidecar--probes-summary result)
                    "   (RET visit · g rescan · q quit)")))
    (when (called-interactively-p 'interactive)
      (pop-to-buffer buf))
    result))

(defun debug-sidecar-probes-visit ()
  "Visit the file and line of the probe at point."
  (interactive)
  (let ((id (tabulated-list-get-id)))
    (unless id (user-error "No probe on this line"))
    (let ((file (expand-file-name (plist-get id :file)
                                  (or debug-sidecar--probes-root default-directory)))
          (line (plist-get id :line)))
      (unless (file-exists-p file)
        (user-error "%s is not on disk" file))
      (pop-to-buffer (find-file-noselect file))
      (when line
        (goto-char (point-min))
        (forward-line (1- line))))))

;;;; Logs buffer

(defvar-local debug-sidecar--logs-run nil "The run this logs buffer shows.")
(defvar-local debug-sidecar--logs-last-line 0 "The highest log line shown.")
(defvar-local debug-sidecar--logs-busy nil "Non-nil while lines are fetched.")
(defvar-local debug-sidecar--logs-pending nil
  "A fetch to make once the running one ends: (RUN . CURSOR) or nil.")

(defvar debug-sidecar-logs-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'debug-sidecar-logs)
    map)
  "Keys of the logs buffer.")

(define-derived-mode debug-sidecar-logs-mode special-mode "Debug-Logs"
  "The current run's probe log lines, appended as they arrive.
\\{debug-sidecar-logs-mode-map}"
  (setq truncate-lines t))

(defun debug-sidecar--logs-reset (run file)
  "Empty the logs buffer for RUN (its log FILE)."
  (setq debug-sidecar--logs-run run
        debug-sidecar--logs-last-line 0)
  (let ((inhibit-read-only t))
    (erase-buffer))
  (setq header-line-format
        (if run (format " Run %s · %s   (g reload · q quit)" run (or file ""))
          " No run: no debug session is active")))

(defun debug-sidecar--logs-insert (entries)
  "Append ENTRIES not shown yet to the current logs buffer."
  (let ((inhibit-read-only t)
        (at-end (= (point) (point-max))))
    (save-excursion
      (goto-char (point-max))
      (dolist (item (append entries nil))
        (let ((line (plist-get item :line)))
          (when (> line debug-sidecar--logs-last-line)
            (insert (debug-sidecar--format-log-entry item) "\n")
            (setq debug-sidecar--logs-last-line line)))))
    (when at-end
      (goto-char (point-max))
      (dolist (win (get-buffer-window-list (current-buffer) nil t))
        (set-window-point win (point-max))))))

(defun debug-sidecar--logs-next ()
  "Start the pending fetch of the current logs buffer, if any."
  (setq debug-sidecar--logs-busy nil)
  (when-let ((pending debug-sidecar--logs-pending))
    (setq debug-sidecar--logs-pending nil)
    (debug-sidecar--logs-follow (car pending) (cdr pending))))

;;;###autoload
(defun debug-sidecar-logs ()
  "Show the current run's log lines; new lines are appended as they arrive."
  (interactive)
  (let ((buf (get-buffer-create debug-sidecar--logs-buffer))
        (params (list :limit 500))
        (first t)
        result)
    (with-current-buffer buf
      (unless (derived-mode-p 'debug-sidecar-logs-mode)
        (debug-sidecar-logs-mode))
      (setq default-directory debug-sidecar--root)
      ;; Lines announced while this loads are fetched after it.
      (setq debug-sidecar--logs-busy t)
      (unwind-protect
          (while (or first (plist-get params :cursor))
            (setq result (debug-sidecar--request 'debug/logs params))
            (when first
              (debug-sidecar--logs-reset (plist-get result :run) (plist-get result :file))
              (setq params (plist-put params :run (plist-get result :run))
                    first nil))
            (debug-sidecar--logs-insert (plist-get result :entries))
            (setq params (plist-put params :cursor (plist-get result :nextCursor))))
        (debug-sidecar--logs-next))
      (when-let ((note (plist-get result :note)))
        (debug-sidecar--notify "debug-sidecar: %s" note)))
    (when (called-interactively-p 'interactive)
      (pop-to-buffer buf))
    buf))

(defun debug-sidecar--logs-fetch (buf run cursor)
  "Fetch RUN's lines from CURSOR into BUF without blocking."
  (let ((conn (debug-sidecar-connection))
        (done (lambda (&rest _)
                (when (buffer-live-p buf)
                  (with-current-buffer buf (debug-sidecar--logs-next))))))
    (when (and conn (buffer-live-p buf))
      (with-current-buffer buf (setq debug-sidecar--logs-busy t))
      (jsonrpc-async-request
       conn 'debug/logs
       (append (list :run run :limit 500) (and cursor (list :cursor cursor)))
       :success-fn
       (lambda (result)
         (if (not (buffer-live-p buf))
             nil
           (with-current-buffer buf
             (if (not (equal run debug-sidecar--logs-run))
                 (debug-sidecar--logs-next)
               (debug-sidecar--logs-insert (plist-get result :entries))
               (if-let ((next (plist-get result :nextCursor)))
                   (debug-sidecar--logs-fetch buf run next)
                 (debug-sidecar--logs-next))))))
       :error-fn done
       :timeout-fn done))))

(defun debug-sidecar--logs-follow (run cursor)
  "RUN's log has lines from CURSOR on: append them to an open logs buffer.
A nil CURSOR reads RUN from its first line."
  (when-let ((buf (get-buffer debug-sidecar--logs-buffer)))
    (with-current-buffer buf
      (cond
       (debug-sidecar--logs-busy
        (unless (and debug-sidecar--logs-pending
                     (equal (car debug-sidecar--logs-pending) run))
          (setq debug-sidecar--logs-pending (cons run cursor))))
       ((null run) (debug-sidecar--logs-reset nil nil))
       ((not (equal run debug-sidecar--logs-run))
        ;; A new run: show it from its first line.
        (debug-sidecar--logs-reset run (and (equal run (plist-get debug-sidecar--snapshot :runId))
                                            (plist-get debug-sidecar--snapshot :logFile)))
        (debug-sidecar--logs-fetch buf run nil))
       (t (debug-sidecar--logs-fetch buf run cursor))))))

(defun debug-sidecar--logs-run-changed (run)
  "The session's current run is now RUN: switch an open logs buffer to it."
  (debug-sidecar--logs-follow run nil))

;;;; Subagents buffer

;; An id up to this long is a name a person reads (oh-my-pi's "Alpha");
;; a longer one is machine-made (pi-subagents' "<run uuid>:<index>"), and
;; the row is named by its task.
(defconst debug-sidecar--agent-name-max 24)
(defconst debug-sidecar--agent-label-max 60)

(defvar debug-sidecar--agents nil
  "The subagent records shown, oldest first (plists, as `agents/list' has them).")
(defvar debug-sidecar--agents-session nil
  "The session whose subagents are shown.")

(defun debug-sidecar--one-line (text)
  "TEXT from the agent's host as one line: control characters become spaces."
  (string-trim (replace-regexp-in-string "[[:cntrl:]]+" " " (format "%s" text))))

(defun debug-sidecar--plural (n one)
  "N and ONE, with an s unless N is 1."
  (format "%d %s%s" n one (if (= n 1) "" "s")))

(defun debug-sidecar--agent-name (record)
  "The name of RECORD's row: its id, or its task when the id is machine-made."
  (let ((id (debug-sidecar--one-line (or (plist-get record :id) "?")))
        (task (and (stringp (plist-get record :description))
                   (debug-sidecar--one-line (plist-get record :description)))))
    (if (or (<= (length id) debug-sidecar--agent-name-max) (not task) (string-empty-p task))
        id
      (truncate-string-to-width task debug-sidecar--agent-label-max nil nil "…"))))

(defun debug-sidecar--agent-entries (records)
  "Tabulated list entries for RECORDS, subagent records.
Each id is the record's id; the columns are State, Name, Type, Work and
the question it asks, its error or its result."
  (mapcar
   (lambda (r)
     (let* ((status (or (plist-get r :status) "?"))
            (question (plist-get r :pendingQuestion))
            (asking (and (member status '("queued" "running"))
                         (stringp question) (not (string-empty-p question))))
            (tools (or (plist-get r :toolUses) 0))
            (turns (or (plist-get r :turns) 0))
            (failure (plist-get r :error))
            (result (plist-get r :result))
            (detail (cond (asking (concat "? " question))
                          ((and (stringp failure) (not (string-empty-p failure))) failure)
                          ((stringp result) result)
                          (t ""))))
       (list (plist-get r :id)
             (vector (propertize (if asking "asks a question" status)
                                 'face (cond ((or asking (equal status "error")) 'debug-sidecar-problem)
                                             ((equal status "running") 'debug-sidecar-live)
                                             (t 'debug-sidecar-issued)))
                     (debug-sidecar--agent-name r)
                     (if (stringp (plist-get r :type)) (debug-sidecar--one-line (plist-get r :type)) "")
                     (string-join (delq nil (list (and (> tools 0) (debug-sidecar--plural tools "tool"))
                                                  (and (> turns 0) (debug-sidecar--plural turns "turn"))))
                                  " · ")
                     (truncate-string-to-width (debug-sidecar--one-line detail) 100 nil nil "…")))))
   records))

(defvar debug-sidecar-agents-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'debug-sidecar-agents)
    map)
  "Keys of the subagents buffer.")

(define-derived-mode debug-sidecar-agents-mode tabulated-list-mode "Debug-Subagents"
  "The agent's subagents, kept current as they change; g reloads.
\\{debug-sidecar-agents-mode-map}"
  (setq tabulated-list-format [("State" 16 t)
                               ("Name" 40 t)
                               ("Type" 10 t)
                               ("Work" 17 nil)
                               ("Question, result or error" 0 nil)])
  (setq tabulated-list-padding 1)
  ;; The column names go in the buffer; the header line counts the subagents.
  (setq-local tabulated-list-use-header-line nil)
  (tabulated-list-init-header))

(defun debug-sidecar--agents-render ()
  "Show `debug-sidecar--agents' in the subagents buffer, if it is open."
  (when-let ((buf (get-buffer debug-sidecar--agents-buffer)))
    (with-current-buffer buf
      (setq tabulated-list-entries (debug-sidecar--agent-entries debug-sidecar--agents))
      (tabulated-list-print t)
      (setq header-line-format
            (format " Subagents: %d   (g reload · q quit)" (length debug-sidecar--agents))))))

(defun debug-sidecar--agents-changed (params)
  "Apply PARAMS of `agents/changed': put its record in place of its id's."
  (let ((record (plist-get params :record))
        (session (plist-get params :sessionId)))
    (unless debug-sidecar--agents-session
      (setq debug-sidecar--agents-session session))
    (when (and record (equal session debug-sidecar--agents-session))
      (let ((old (cl-position (plist-get record :id) debug-sidecar--agents
                              :key (lambda (r) (plist-get r :id)) :test #'equal)))
        (if old
            (setf (nth old debug-sidecar--agents) record)
          (setq debug-sidecar--agents (append debug-sidecar--agents (list record)))))
      (debug-sidecar--agents-render))))

;;;###autoload
(defun debug-sidecar-agents ()
  "List the agent's subagents, kept current as they change.
Each row has its state, name, type and work, and the question it asks,
its error or its result."
  (interactive)
  (let ((result (debug-sidecar--request 'agents/list nil))
        (buf (get-buffer-create debug-sidecar--agents-buffer)))
    (setq debug-sidecar--agents-session (plist-get result :sessionId)
          debug-sidecar--agents (append (plist-get result :agents) nil))
    (with-current-buffer buf
      (unless (derived-mode-p 'debug-sidecar-agents-mode)
        (debug-sidecar-agents-mode)))
    (debug-sidecar--agents-render)
    (when (called-interactively-p 'interactive)
      (pop-to-buffer buf))
    result))

;;;; Minor mode

(defvar debug-sidecar-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "s" #'debug-sidecar-start)
    (define-key map "p" #'debug-sidecar-proceed)
    (define-key map "f" #'debug-sidecar-done)
    (define-key map "m" #'debug-sidecar-mark)
    (define-key map "a" #'debug-sidecar-abort)
    (define-key map "P" #'debug-sidecar-probes)
    (define-key map "l" #'debug-sidecar-logs)
    (define-key map "A" #'debug-sidecar-agents)
    (define-key map "i" #'debug-sidecar-status)
    (define-key map "r" #'debug-sidecar-restart)
    map)
  "The commands of debug-sidecar, as a prefix map.
`debug-sidecar-mode' binds it under `debug-sidecar-keymap-prefix'; it
can also be bound elsewhere, for example
  (global-set-key (kbd \"C-c d\") \='debug-sidecar-command-map)")
(fset 'debug-sidecar-command-map debug-sidecar-command-map)

(defvar debug-sidecar-mode-map (make-sparse-keymap)
  "Keymap of `debug-sidecar-mode'.
It binds `debug-sidecar-command-map' under `debug-sidecar-keymap-prefix'.")

(defun debug-sidecar--set-keymap-prefix (symbol value)
  "Set SYMBOL to VALUE and bind `debug-sidecar-command-map' under it."
  (let ((old (and (boundp symbol) (symbol-value symbol))))
    (when old
      (define-key debug-sidecar-mode-map (kbd old) nil)))
  (set-default symbol value)
  (when value
    (define-key debug-sidecar-mode-map (kbd value) 'debug-sidecar-command-map)))

(defcustom debug-sidecar-keymap-prefix "C-c ,"
  "The key of `debug-sidecar-command-map' in `debug-sidecar-mode'.
A string as `kbd' reads it, or nil to bind nothing (then bind the
command map yourself).  The Emacs key binding conventions leave
the control-c prefix followed by a punctuation character other than
{ } < > : ; to minor modes.  Org mode binds the default key to
`org-priority' and Semantic uses it as its prefix: this mode's
binding shadows them while it is on.  Change it with
`customize-set-variable', or with `setq' before the package is loaded."
  :type '(choice (const :tag "No key" nil)
                 (string :tag "Key (as for kbd)"))
  :set #'debug-sidecar--set-keymap-prefix)

;;;###autoload
(define-minor-mode debug-sidecar-mode
  "Show the debug session in the mode line and bind its commands.
The lighter shows the agent's turn state (with a spinner while it is
busy), the stage of the session and its round.  Commands are under
`debug-sidecar-keymap-prefix' (\\<debug-sidecar-mode-map>\\[debug-sidecar-command-map]):

\\{debug-sidecar-command-map}
Turning the mode off stops the sidecar; the session stays on disk."
  :global t
  :lighter debug-sidecar-mode-line
  :keymap debug-sidecar-mode-map
  (if debug-sidecar-mode
      (add-hook 'kill-emacs-hook #'debug-sidecar--shutdown)
    (remove-hook 'kill-emacs-hook #'debug-sidecar--shutdown)
    (debug-sidecar--shutdown)))

(provide 'debug-sidecar)
;;; debug-sidecar.el ends here
