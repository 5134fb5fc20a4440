"""`bridgeembed-mine` end to end with the shipped model on tiny files: translations found among distractors,
shards reused, align mode, and the refusals that need shard folders (the simple bad inputs are rows of
docs/bad_input.md)."""

import sys

import pytest

pytestmark = pytest.mark.usefixtures("shipped_model")

from bridgeembed.cli import encode, mine  # noqa: E402

DE = ["Ein Hund rennt über eine Wiese.", "Zwei Kinder spielen im Sand.", "Eine Frau liest ein Buch im Park.",
      "Ein Mann fährt Fahrrad auf der Straße.", "Drei Leute sitzen in einer Höhle.",
      "Eine Gruppe von Menschen steht vor einem Iglu."]
EN = ["A dog runs across a meadow.", "Two children play in the sand.", "A woman reads a book in the park.",
      "A man rides a bicycle on the street.", "Three people sit in a cave.",
      "A group of people standing in front of an igloo."]
DISTRACTORS = ["A little girl climbs a wooden playhouse.", "Workers repair the roof of a house.",
               "A chef cooks in a restaurant kitchen.", "Two men are playing chess outside.",
               "A boy jumps into a swimming pool.", "A singer performs on a stage at night."]


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run_mine(*argv):
    return mine.main([str(a) for a in argv])


def read_tsv(path):
    rows = [line.rstrip("\n").split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(float(score), src, tgt) for score, src, tgt in rows]


@pytest.fixture
def files(tmp_path):
    de = write(tmp_path / "de.txt", DE)
    en = write(tmp_path / "en.txt", [*DISTRACTORS[:3], EN[3], EN[0], "", EN[5], *DISTRACTORS[3:], EN[1], EN[4], EN[2]])
    return de, en


def test_mining_finds_the_translations_among_distractors(files, tmp_path, capsys):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    de, en = files
    out = tmp_path / "pairs.tsv"
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", out,
                    "--threshold", "all") == 0
    # 13 lines, one of them blank: blank lines are never sentences
    # k = 4 on a side of 6 is 3 (at most half the smaller side), and the summary says so (issue 40)
    assert f"wrote {out}: 6 pairs (mine, ratio, k = 3 of 4 asked, no threshold) from 6 x 12 sentences" in \
        capsys.readouterr().err
    rows = read_tsv(out)
    assert [s for s, _, _ in rows] == sorted((s for s, _, _ in rows), reverse=True)
    assert {(src, tgt) for _, src, tgt in rows} == set(zip(DE, EN))  # every source once, never the blank line
    threshold = (rows[2][0] + rows[3][0]) / 2  # between two printed scores: rounding cannot move a pair across
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", out,
                    "--threshold", threshold, "--scoring", "ratio") == 0
    assert read_tsv(out) == rows[:3]


def test_shards_serve_the_next_mining(files, tmp_path, capsys):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    de, en = files
    shards, first, second = tmp_path / "shards", tmp_path / "first.tsv", tmp_path / "second.tsv"
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", first,
                    "--shards", shards, "--scoring", "distance") == 0
    assert sorted(p.name for p in shards.iterdir()) == ["de.txt.de", "en.txt.en"]
    written = {p: p.stat().st_mtime_ns for p in shards.rglob("*.npy")}
    assert run_mine("--src", shards / "de.txt.de", "--tgt", shards / "en.txt.en", "--out", second,
                    "--scoring", "distance") == 0  # no model needed
    assert second.read_text() == first.read_text()
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", second,
                    "--shards", shards, "--scoring", "distance") == 0
    assert {p: p.stat().st_mtime_ns for p in shards.rglob("*.npy")} == written  # nothing encoded again
    capsys.readouterr()
    write(en, EN)  # the text changed after its shards were made
    assert run_mine("--src", shards / "de.txt.de", "--tgt", shards / "en.txt.en", "--out", second) == 2
    assert f"error: {en} changed after {shards / 'en.txt.en'} was encoded from it" in capsys.readouterr().err
    assert run_mine("--src", shards / "de.txt.de", "--src-lang", "fr", "--tgt", shards / "en.txt.en",
                    "--out", second) == 2
    assert f"error: --src {shards / 'de.txt.de'} holds 'de' sentences, not --src-lang 'fr'" in capsys.readouterr().err


def test_align_mode_scores_line_pairs_and_documents(tmp_path, capsys, caplog):
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    de = write(tmp_path / "de.txt", [*DE[:3], "", *DE[3:]])
    en = write(tmp_path / "en.txt", [*EN[:3], "", *EN[3:]])
    out = tmp_path / "scored.tsv"
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", out,
                    "--mode", "align", "--scoring", "absolute") == 0
    rows = read_tsv(out)
    assert sorted((src, tgt) for _, src, tgt in rows) == sorted(zip(DE, EN))  # line i with line i, no blank pair
    assert all(0.3 < score <= 1 for score, _, _ in rows)
    shuffled = write(tmp_path / "en2.txt", [EN[2], EN[0], EN[1], "", EN[5], EN[3], EN[4]])  # order within documents
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", shuffled, "--tgt-lang", "en", "--out", out,
                    "--mode", "align", "--documents") == 0
    assert {(src, tgt) for _, src, tgt in read_tsv(out)} == set(zip(DE, EN))
    err = capsys.readouterr().err
    # the blank separator is no sentence (it counted as one), and the margin's scale within documents is said
    assert "from 6 x 6 sentences in 2 pairs of documents" in err
    assert "--documents: the ratio margin compares each pair with neighbours inside its own documents (median 3 " \
           "sentences)" in caplog.text
    write(shuffled, [EN[2], EN[0], EN[1], EN[5], EN[3], EN[4]])  # one document where the source has two
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", shuffled, "--tgt-lang", "en", "--out", out,
                    "--mode", "align", "--documents") == 2
    assert f"error: --documents: {de} has 2 documents and {shuffled} 1" in capsys.readouterr().err


def test_shards_of_another_model_or_dimension_are_refused(files, tmp_path, capsys):
    de, en = files
    ours, bow, untrained = tmp_path / "ours", tmp_path / "bow", tmp_path / "untrained"
    assert encode.main(["--lang", "de", "--in", str(de), "--shards", str(ours)]) == 0
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    assert run_mine("--src", en, "--src-lang", "en", "--tgt", en, "--tgt-lang", "en", "--shards", untrained,
                    "--model", "untrained:general-m2m", "--out", tmp_path / "p.tsv") == 0
    untrained = untrained / "en.txt.en"
    from bridgeembed.encoders.baselines import HashBowEncoder
    from bridgeembed.mining import encode_options, encode_to_shards

    encode_to_shards(HashBowEncoder(), en, "en", bow, encode_options(model="bow"))
    capsys.readouterr()
    assert run_mine("--src", ours, "--tgt", bow, "--out", tmp_path / "p.tsv") == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {bow}: shards of dim 300 (model 'bow') cannot be mined against {ours}'s 512 (model "
                   f"'general-m2m'): encode both with one model and the same --heads")
    assert run_mine("--src", ours, "--tgt", untrained, "--out", tmp_path / "p.tsv") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {untrained}: shards of fingerprint ") and "'untrained:general-m2m'" in err
    assert run_mine("--src", ours, "--tgt", en, "--tgt-lang", "en", "--model", "untrained:general-m2m",
                    "--out", tmp_path / "p.tsv") == 2
    assert (f"error: --src {ours} was encoded with model 'general-m2m', not --model untrained:general-m2m"
            in capsys.readouterr().err)
    assert run_mine("--src", ours, "--tgt", ours, "--heads", "3", "--out", tmp_path / "p.tsv") == 2
    assert f"error: --src {ours} holds vectors of heads 'mean', not --heads 3" in capsys.readouterr().err


def test_an_incomplete_shard_folder_is_refused(files, tmp_path, capsys):
    de, _ = files
    folder = tmp_path / "shards"
    assert encode.main(["--lang", "de", "--in", str(de), "--shards", str(folder), "--shard-size", "2"]) == 0
    (folder / "shard-00001.npy").unlink()
    (folder / "shard-00002.npy").unlink()
    capsys.readouterr()
    assert run_mine("--src", folder, "--tgt", folder, "--out", tmp_path / "p.tsv") == 2
    assert (f"error: {folder} is incomplete: 2 of 3 shards missing or damaged (shard-00001.npy, shard-00002.npy); "
            f"run the same encoding again to finish it") in capsys.readouterr().err
    assert encode.main(["--lang", "de", "--in", str(de), "--shards", str(folder), "--shard-size", "2"]) == 0
    assert "wrote" in capsys.readouterr().err


def test_without_faiss_the_error_says_what_to_install(files, tmp_path, monkeypatch, capsys):
    de, en = files
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss raises ImportError
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", tmp_path / "p.tsv") == 2
    assert ("error: bitext mining and search need FAISS: pip install faiss-cpu (or pip install "
            "'bridgeembed[mining]')") in capsys.readouterr().err
    assert not (tmp_path / "p.tsv").exists()


def test_two_inputs_of_one_base_name_get_their_own_shard_folders(tmp_path, capsys):
    """Issue 31: a/news.txt and b/news.txt of one language went to one folder, DIR/news.txt.en, and the second
    was refused as "made with input a/news.txt"."""
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    src, tgt = write(tmp_path / "a" / "news.txt", EN[:3]), write(tmp_path / "b" / "news.txt", EN[3:])
    shards, out = tmp_path / "shards", tmp_path / "pairs.tsv"
    argv = ["--src", src, "--src-lang", "en", "--tgt", tgt, "--tgt-lang", "en", "--out", out, "--shards", shards]
    assert run_mine(*argv) == 0, capsys.readouterr().err
    folders = {p.name for p in shards.iterdir()}
    assert len(folders) == 2 and "news.txt.en" in folders and (folders - {"news.txt.en"}).pop().startswith("news.txt-")
    assert {src for _, src, _ in read_tsv(out)} <= set(EN[:3])
    written = {p: p.stat().st_mtime_ns for p in shards.rglob("*.npy")}
    assert run_mine(*argv) == 0  # the next mining finds each file's folder again
    assert {p: p.stat().st_mtime_ns for p in shards.rglob("*.npy")} == written


def test_sigterm_during_mining_leaves_no_temporary_shard_folder(tmp_path):
    """Issue 31: SIGTERM killed bridgeembed-mine without --shards and left bridgeembed-mine-* folders in /tmp."""
    import os
    import signal
    import subprocess
    import time

    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    temp = tmp_path / "tmp"
    temp.mkdir()
    big = write(tmp_path / "big.txt", [f"{DE[i % len(DE)]} {i}" for i in range(20000)])
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.Popen([sys.executable, "-m", "bridgeembed.cli.mine", "--src", str(big), "--src-lang", "de",
                             "--tgt", str(big), "--tgt-lang", "de", "--out", str(tmp_path / "p.tsv"), "--quiet",
                             "--shard-size", "500"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(temp.glob("bridgeembed-mine-*/*/shard-*.npy")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and b"Traceback" not in err, err
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_pool_of_encoders_is_one_line_and_the_shards_resume(tmp_path, sig):
    """Issue 40: SIGTERM or SIGHUP during `bridgeembed-encode --shards DIR --processes 2` printed multiprocessing's
    resource_tracker UserWarning about leaked semaphores (the parent and its workers killed by the default
    action). Now one line; the shards written stay, and the same command finishes the rest."""
    import os
    import signal
    import subprocess
    import time

    big = write(tmp_path / "big.txt", [f"{DE[i % len(DE)]} {i}" for i in range(4000)])
    folder = tmp_path / "shards"
    argv = [sys.executable, "-m", "bridgeembed.cli.encode", "--lang", "de", "--in", str(big), "--shards", str(folder),
            "--shard-size", "200", "--processes", "2", "--threads", "2", "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not list(folder.glob("shard-*.npy")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=120)  # until the resource_tracker, which shares stderr, has ended too
    assert proc.returncode == 128 + getattr(signal, sig), err
    assert err.decode().strip() == f"stopped by {sig}: the shards written are kept in {folder}; run the same command " \
                                   f"again to finish"
    assert 0 < len(list(folder.glob("shard-*.npy"))) < 20 and not list(folder.glob(".*.tmp"))
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and len(list(folder.glob("shard-*.npy"))) == 20, done.stderr


def test_sigint_at_any_moment_is_one_line(tmp_path):
    """Issue 40: a Ctrl-C in the first seconds of bridgeembed-mine (while it imported FAISS and scikit-learn at
    module level, before run_main's guard) printed a KeyboardInterrupt traceback. Started as its console script
    starts it; the exit status is 130, or death by SIGINT (130 to a shell) before the command is imported."""
    import os
    import signal
    import subprocess
    import time

    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    big = write(tmp_path / "big.txt", [f"{DE[i % len(DE)]} {i}" for i in range(20000)])
    script = "import sys; from bridgeembed.cli.mine import main; sys.exit(main())"
    argv = ["--src", big, "--src-lang", "de", "--tgt", big, "--tgt-lang", "de", "--out", tmp_path / "p.tsv",
            "--quiet"]
    for delay in (0.3, 1.0, 2.0, 3.5):
        # a terminal's Ctrl-C: SIGINT handled by default, even where pytest runs as a background job (which
        # ignores SIGINT, and its children inherit that)
        proc = subprocess.Popen([sys.executable, "-c", script, *map(str, argv)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"},
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (130, -signal.SIGINT) and err.decode().splitlines()[-1:] == ["interrupted"], \
            (delay, proc.returncode, err.decode()[-2000:])
        assert b"Traceback" not in err, err.decode()[-2000:]
    assert not (tmp_path / "p.tsv").exists()


def test_a_ctrl_c_while_a_command_is_imported_or_parsed_is_one_line(monkeypatch, capsys):
    """The two moments before the command's own guard: importing it (the hook of bridgeembed.cli, for every
    console script) and building its parser (bridgeembed-mine's imports FAISS and scikit-learn); and the command
    module itself imports none of those, so the first moment is short."""
    import argparse
    import subprocess

    done = subprocess.run([sys.executable, "-c", "import bridgeembed.cli.mine, sys\n"
                           "print(sorted(m for m in ('sklearn', 'scipy', 'faiss', 'torch') if m in sys.modules))\n"
                           "raise KeyboardInterrupt"], capture_output=True, text=True, timeout=120)
    assert done.stdout == "[]\n" and done.stderr == "interrupted\n", done.stderr
    assert done.returncode in (130, -2, 0xC000013A)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", interrupted)
    assert mine.main(["--src", "a", "--tgt", "b", "--out", "c"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_mining_keeps_pairs_at_the_default_threshold_unless_told_all(files, tmp_path, capsys):
    """Issue 29: without --threshold, mining with the ratio margin keeps pairs at the threshold chosen on dev data
    (it kept every candidate: precision 7% on held-out captions); --threshold all keeps every candidate."""
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    from bridgeembed.mining.mine import DEFAULT_RATIO_THRESHOLD

    de, en = files
    every, default = tmp_path / "all.tsv", tmp_path / "default.tsv"
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", every,
                    "--threshold", "all") == 0
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", default) == 0
    err = capsys.readouterr().err
    kept = [row for row in read_tsv(every) if row[0] >= DEFAULT_RATIO_THRESHOLD]
    assert read_tsv(default) == kept
    assert f"scores >= {DEFAULT_RATIO_THRESHOLD:g}, the default; --threshold all keeps every candidate" in err
    assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out", default,
                    "--scoring", "absolute") == 0
    assert "(mine, absolute, no threshold)" in capsys.readouterr().err  # no default for cosines, and no k


def test_shard_lines_name_a_shard_folder_only_when_it_outlives_the_mining(files, tmp_path, caplog):
    """Issue 50, finding 10: a 10-line job without --shards logged four INFO lines naming the temporary shard
    folders it then deleted; they are DEBUG now, while a --shards folder (kept for the next mining) is named."""
    pytest.importorskip("faiss", reason="faiss-cpu is not installed")
    de, en = files
    with caplog.at_level("INFO", logger="bridgeembed"):
        assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out",
                        tmp_path / "a.tsv") == 0
    assert "bridgeembed-mine-" not in caplog.text and "shard" not in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="bridgeembed"):
        assert run_mine("--src", de, "--src-lang", "de", "--tgt", en, "--tgt-lang", "en", "--out",
                        tmp_path / "b.tsv", "--shards", tmp_path / "kept") == 0
    assert f"{tmp_path / 'kept' / 'de.txt.de'}: encoding 1 of 1 shards (6 lines)" in caplog.text
