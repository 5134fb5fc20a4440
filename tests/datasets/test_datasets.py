"""The downloader and `bridgeembed-data senteval|multi30k|xnli|reviews`, against a local HTTP server
(127.0.0.1, started here) serving small files and archives the tests build. No internet needed."""

import gzip
import hashlib
import io
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bridgeembed.cli.data import main as data_main
from bridgeembed.datasets import corpora, senteval
from bridgeembed.datasets.download import extract, fetch
from bridgeembed.errors import DataError


class Server:
    """Serves `files` (path -> bytes); honours Range; can cut a response short once or ignore Range."""

    def __init__(self):
        self.files, self.requests, self.truncate_once, self.ignore_range = {}, [], set(), False
        self.no_length = False  # no Content-Length: the body ends when the connection closes (HTTP/1.0)
        self.range_from_zero = False  # answers a Range request with 206 but the bytes from 0 (a broken cache)
        self.trickle = None  # seconds between single bytes: a server that keeps a download alive forever
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                data = server.files.get(self.path)
                if data is None:
                    self.send_error(404, "Not Found")
                    return
                start, status = 0, 200
                if self.headers.get("Range") and not server.ignore_range:
                    start, status = int(self.headers["Range"].split("=")[1].split("-")[0]), 206
                    start = 0 if server.range_from_zero else start
                    if start >= len(data):
                        self.send_error(416)
                        return
                # the cut is taken before the headers go out, so the client, which may stop at the headers, never
                # sends its next request while this one still holds it
                cut = self.path in server.truncate_once
                server.truncate_once.discard(self.path)
                self.send_response(status)
                if not server.no_length:
                    self.send_header("Content-Length", str(len(data) - start))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if server.trickle:
                    try:
                        for i in range(start, min(len(data), start + 100)):
                            self.wfile.write(data[i:i + 1])
                            self.wfile.flush()
                            time.sleep(server.trickle)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                if cut:
                    self.wfile.write(data[start:start + (len(data) - start) // 2])
                    self.close_connection = True
                    return
                self.wfile.write(data[start:])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


PAYLOAD = bytes(range(256)) * 600  # 150 kB: several chunks


def test_fetch_checks_sha256_and_keeps_a_good_file(server, tmp_path):
    server.files["/a.bin"] = PAYLOAD
    dest = fetch(f"{server.url}/a.bin", tmp_path / "a.bin", sha(PAYLOAD), progress=False)
    assert dest.read_bytes() == PAYLOAD and not (tmp_path / "a.bin.part").exists()
    fetch(f"{server.url}/a.bin", dest, sha(PAYLOAD), progress=False)
    assert len(server.requests) == 1, "a complete, verified file is not downloaded again"


def test_interrupted_download_resumes_with_a_range_request(server, tmp_path):
    server.files["/big.bin"] = PAYLOAD
    server.truncate_once.add("/big.bin")
    url, dest = f"{server.url}/big.bin", tmp_path / "big.bin"
    with pytest.raises(DataError, match="interrupted|stopped") as err:
        fetch(url, dest, sha(PAYLOAD), progress=False)
    assert url in str(err.value) and str(dest) in str(err.value)
    part = tmp_path / "big.bin.part"
    assert not dest.exists() and 0 < part.stat().st_size < len(PAYLOAD)
    fetch(url, dest, sha(PAYLOAD), progress=False)
    assert server.requests[-1] == ("/big.bin", f"bytes={len(PAYLOAD) // 2}-")
    assert dest.read_bytes() == PAYLOAD and not part.exists()


def test_server_without_range_support_restarts_from_zero(server, tmp_path):
    server.files["/f"] = PAYLOAD
    server.ignore_range = True
    (tmp_path / "f.part").write_bytes(b"garbage")
    assert fetch(f"{server.url}/f", tmp_path / "f", sha(PAYLOAD), progress=False).read_bytes() == PAYLOAD


def test_checksum_mismatch_and_http_errors_name_url_and_destination(server, tmp_path):
    server.files["/x"] = b"not what you expected"
    url, dest = f"{server.url}/x", tmp_path / "x"
    with pytest.raises(DataError, match="checksum mismatch") as err:
        fetch(url, dest, "0" * 64, progress=False)
    assert url in str(err.value) and str(dest) in str(err.value)
    assert not dest.exists() and not (tmp_path / "x.part").exists()
    with pytest.raises(DataError, match="HTTP 404") as err:
        fetch(f"{server.url}/missing", tmp_path / "m", progress=False)
    assert "/missing" in str(err.value) and str(tmp_path / "m") in str(err.value)


def test_extract_refuses_members_outside_the_folder(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../outside.txt", "x")
    with pytest.raises(DataError, match="outside"):
        extract(archive, tmp_path / "into")
    assert not (tmp_path / "outside.txt").exists()


def _zip(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buffer.getvalue()


def _tgz(members: dict) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def senteval_mirror(server):
    """A flat mirror with one tiny file per upstream file name."""
    f = server.files
    for split in ("train", "dev", "test"):
        f[f"/m/sentiment-{split}"] = b"1 a good film\n"
        f[f"/m/stsa.fine.{split}"] = b"4 a great film\n"
    for task, (url, folder, subsets) in senteval.STS_YEARS.items():
        prefix = "STS2016" if task == "STS16" else "STS"
        members = {f"{folder}/{prefix}.input.{s}.txt": b"It's A Dog.\tThe dog, isn't it?\textra\n" for s in subsets.split()}
        members.update({f"{folder}/{prefix}.gs.{s}.txt": b"4.0\n" for s in subsets.split()})
        f["/m/" + url.rsplit("/", 1)[1]] = _zip(members)
    f["/m/Stsbenchmark.tar.gz"] = _tgz({f"stsbenchmark/sts-{s}.csv": b"g\tf\t2012\t1\t3.5\tA Man's Hat.\tA hat!\n"
                                        for s in ("train", "dev", "test")})
    for split in ("train_5500", "TREC_10"):
        f[f"/m/{split}.label"] = b"DESC:def What is `` Caf\xe9 '' ?\n"
    for split in ("train", "trial", "test_annotated"):
        f[f"/m/sick_{split}.zip"] = _zip({f"SICK_{split}.txt": b"pair_ID\tsentence_A\tsentence_B\tscore\tlabel\r\n"
                                          b"1\tA dog's bone.\tNo, it isn't.\t4.5\tNEUTRAL\r\n", "readme.txt": b"r"})
    f["/m/datasmall_NB_ACL12.zip"] = _zip({f"data/{folder}/{stem}.{c}": b"caf\xe9 (great) film, \"really\"...\n"
                                           for folder, stem, classes in senteval.BINARY.values() for c in classes})
    header = b"gold_label\ta\tb\tc\td\tsentence1\tsentence2\n"
    f["/m/snli_1.0.zip"] = _zip({f"snli_1.0/snli_1.0_{s}.txt": header + b"neutral\t.\t.\t.\t.\tA man's here.\tHe sleeps.\n"
                                 b"-\t.\t.\t.\t.\tNo gold.\tSkip me.\n" for s in ("train", "dev", "test")})
    for split in ("train", "test"):
        f[f"/m/msr_paraphrase_{split}.txt"] = b"\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    for task in senteval.PROBING_TASKS:
        f[f"/m/{task}.txt"] = b"tr\tX\ta b c\n"


def test_senteval_command_builds_the_downstream_layout_from_a_mirror(server, tmp_path, monkeypatch):
    senteval_mirror(server)
    monkeypatch.setattr(senteval, "SHA256", {})  # the tiny stand-ins cannot match the real files' checksums
    dest = tmp_path / "senteval"
    assert data_main(["senteval", "--dest", str(dest), "--mirror", f"{server.url}/m"]) == 0
    down = dest / "downstream"
    assert (down / "SST/fine/sentiment-dev").read_bytes() == b"4 a great film\n"
    assert (down / "STS/STS16-en-test/STS.input.headlines.txt").read_text() == "it 's a dog .\tthe dog , isn 't it ?\n"
    assert (down / "STS/STS16-en-test/STS.gs.headlines.txt").exists()
    assert (down / "STS/STS12-en-test/STS.input.MSRpar.txt").exists()
    assert (down / "STS/STSBenchmark/sts-dev.csv").read_text() == "g\tf\t2012\t1\t3.5\ta man 's hat .\ta hat !\n"
    assert (down / "TREC/TREC_10.label").read_bytes() == b"DESC:def What is  Caf\xe9  ?\n"
    sick = (down / "SICK/SICK_trial.txt").read_bytes().decode().split("\n")
    assert sick[0] == "pair_ID\tsentence_A\tsentence_B\tscore\tlabel\r" and sick[1] == "1\tA dog 's bone .\tNo , it isn 't .\t4.5\tNEUTRAL\r"
    assert (down / "MR/rt-polarity.neg").read_text() == "cafM-i ( great ) film , `` really '' ... \n"
    assert (down / "SUBJ/subj.objective").exists() and (down / "MPQA/mpqa.pos").exists()
    assert (down / "SNLI/s1.test").read_text() == "A man 's here . \n"
    assert (down / "SNLI/labels.dev").read_text() == "neutral\n"
    assert (down / "MRPC/msr_paraphrase_test.txt").read_bytes().startswith(b"\xef\xbb\xbf")
    assert sorted(p.name for p in (dest / "probing").iterdir()) == sorted(f"{t}.txt" for t in senteval.PROBING_TASKS)
    assert not (dest / "downloads").exists()


def test_senteval_command_reports_a_checksum_mismatch(server, tmp_path, capsys):
    senteval_mirror(server)
    assert data_main(["senteval", "--dest", str(tmp_path), "--mirror", f"{server.url}/m", "--tasks", "SST"]) == 2
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and "sentiment-train" in err
    assert data_main(["senteval", "--dest", str(tmp_path), "--tasks", "SST,COCO"]) == 2
    assert "COCO" in capsys.readouterr().err


def test_corpus_commands_fill_the_data_root_layout(server, tmp_path, monkeypatch):
    sums = {}
    for command in (corpora.multi30k, corpora.xnli, corpora.reviews):
        for rel, _ in command.files():
            data = gzip.compress(b"A caption .\n") if rel.endswith(".gz") else f"{rel}\tp\th\tneutral\n".encode()
            server.files[f"/root/{rel}"] = data
            sums[rel] = sha(data)
    monkeypatch.setattr(corpora, "SHA256", sums)
    root = tmp_path / "data"
    for name in ("multi30k", "xnli", "reviews"):
        assert data_main([name, "--data", str(root), "--mirror", f"{server.url}/root"]) == 0
    assert gzip.decompress((root / "multi30k/val.cs.gz").read_bytes()) == b"A caption .\n"
    assert (root / "xnli/xtreme/dev-sw.tsv").exists()
    assert (root / "xnli/xtreme/test.labels").read_text() == "neutral\n"
    assert (root / "reviews/xlm-t-umsab-tweets/german/val_labels.txt").exists()
    assert (root / "reviews/semeval2016-absa-restaurants/restaurants_test_turkish.xml.dat").exists()
    server.files["/root/multi30k/train.en.gz"] = b"tampered"
    (root / "multi30k/train.en.gz").unlink()
    assert data_main(["multi30k", "--data", str(root), "--mirror", f"{server.url}/root", "--only", "train.en"]) == 2


def test_a_response_without_length_or_checksum_is_refused(server, tmp_path):
    """A connection closed early is indistinguishable from the end of such a body: nothing may land."""
    server.files["/f"] = PAYLOAD
    server.no_length = True
    server.truncate_once.add("/f")
    with pytest.raises(DataError, match="declares no length and no checksum is known") as err:
        fetch(f"{server.url}/f", tmp_path / "f", progress=False)
    assert f"{server.url}/f" in str(err.value) and str(tmp_path / "f") in str(err.value)
    assert list(tmp_path.iterdir()) == []
    assert fetch(f"{server.url}/f", tmp_path / "f", sha(PAYLOAD), progress=False).read_bytes() == PAYLOAD


def test_md5_checksums_are_checked_too(server, tmp_path):
    server.files["/f"] = PAYLOAD
    url = f"{server.url}/f"
    with pytest.raises(DataError, match="expected md5 0+, got " + hashlib.md5(PAYLOAD).hexdigest()):
        fetch(url, tmp_path / "f", "md5:" + "0" * 32, progress=False)
    assert not (tmp_path / "f").exists()
    assert fetch(url, tmp_path / "f", "md5:" + hashlib.md5(PAYLOAD).hexdigest(), progress=False).exists()


def test_senteval_never_installs_a_truncated_file(server, tmp_path, monkeypatch, capsys):
    """The audit's case: TREC_10.label cut at half, no Content-Length, and the command reported success."""
    assert {"TREC_10.label", "train_5500.label"} <= set(senteval.SHA256)  # TREC's files are pinned
    senteval_mirror(server)
    trec = b"".join(b"DESC:def What is question %d ?\n" % i for i in range(500))
    server.files["/m/TREC_10.label"] = trec
    server.no_length = True
    server.truncate_once.add("/m/TREC_10.label")
    sums = {name: sha(server.files[f"/m/{name}"]) for name in ("train_5500.label", "TREC_10.label")}
    monkeypatch.setattr(senteval, "SHA256", sums)  # the stand-ins' checksums, pinned as the real ones are
    command = ["senteval", "--data", str(tmp_path), "--mirror", f"{server.url}/m", "--tasks", "TREC"]
    assert data_main(command) == 2
    assert "checksum mismatch" in capsys.readouterr().err
    assert not (tmp_path / "senteval/downstream/TREC/TREC_10.label").exists()
    assert data_main(command) == 0  # run again: the whole file this time
    assert len((tmp_path / "senteval/downstream/TREC/TREC_10.label").read_bytes().splitlines()) == 500


def test_every_senteval_file_without_a_checksum_needs_a_declared_length(server, tmp_path, monkeypatch, capsys):
    assert {"snli_1.0.zip", "TREC_10.label", "train_5500.label"} <= set(senteval.SHA256)
    senteval_mirror(server)
    server.no_length = True
    monkeypatch.setattr(senteval, "SHA256", {})
    assert data_main(["senteval", "--data", str(tmp_path), "--mirror", f"{server.url}/m", "--tasks", "MRPC"]) == 2
    assert "declares no length" in capsys.readouterr().err
    assert not (tmp_path / "senteval/downstream/MRPC").exists()


def test_download_and_benchmark_agree_on_the_data_folder(server, tmp_path, monkeypatch):
    """The hint says `--data DIR` and `bridgeembed-data senteval --data DIR`: both mean the data root,
    and the senteval folder itself is accepted as well."""
    from bridgeembed.paths import senteval_dir
    from bridgeembed.senteval.readers import MissingData

    senteval_mirror(server)
    monkeypatch.setattr(senteval, "SHA256", {})
    hint = str(MissingData([tmp_path / "x"]))
    assert "`bridgeembed-data senteval --data DIR`" in hint and "give --data DIR, the data root" in hint
    root = tmp_path / "root"
    assert data_main(["senteval", "--data", str(root), "--mirror", f"{server.url}/m", "--tasks", "MRPC"]) == 0
    for given in (root, root / "senteval"):
        assert (senteval_dir(str(given)) / "downstream/MRPC/msr_paraphrase_train.txt").is_file()
    monkeypatch.setenv("BRIDGEEMBED_DATA", str(root))
    assert senteval_dir() == root / "senteval"


def test_senteval_keeps_files_it_did_not_create_in_downloads(server, tmp_path, monkeypatch):
    """Issue 19: `--dest D` used to delete D/downloads/ whole, the user's own files with it."""
    senteval_mirror(server)
    monkeypatch.setattr(senteval, "SHA256", {})
    mine = tmp_path / "downloads" / "thesis.tex"
    mine.parent.mkdir()
    mine.write_text("three years of work")
    (tmp_path / "downloads" / "snli_1.0.zip.d").mkdir()  # a folder named like ours, not made by this run
    (tmp_path / "downloads" / "snli_1.0.zip.d" / "notes.txt").write_text("mine too")
    assert data_main(["senteval", "--dest", str(tmp_path), "--mirror", f"{server.url}/m", "--tasks", "MRPC,SST"]) == 0
    assert mine.read_text() == "three years of work"
    assert (tmp_path / "downloads" / "snli_1.0.zip.d" / "notes.txt").read_text() == "mine too"
    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == ["snli_1.0.zip.d", "thesis.tex"]
    assert (tmp_path / "downstream/MRPC/msr_paraphrase_test.txt").exists()


def test_a_range_answer_from_another_offset_is_not_appended(server, tmp_path):
    """Issue 19: a 206 whose Content-Range starts at 0, not at our offset, was appended after the part."""
    server.files["/f"] = PAYLOAD
    server.truncate_once.add("/f")
    url, dest = f"{server.url}/f", tmp_path / "f"
    with pytest.raises(DataError):
        fetch(url, dest, progress=False)  # half of it in f.part, with its record
    server.range_from_zero = True
    assert fetch(url, dest, progress=False).read_bytes() == PAYLOAD
    assert not list(tmp_path.glob("*.part*"))


def test_a_part_file_of_another_download_is_not_continued(server, tmp_path):
    """Issue 19: a stale .part (another version of the file, or left by an older bridgeembed) was resumed."""
    server.files["/f"] = PAYLOAD
    url, dest = f"{server.url}/f", tmp_path / "f"
    (tmp_path / "f.part").write_bytes(b"the first bytes of last year's file")
    assert fetch(url, dest, progress=False).read_bytes() == PAYLOAD
    assert server.requests[-1] == ("/f", None), "no range request for a part of unknown origin"
    (tmp_path / "g.part").write_bytes(PAYLOAD[:1000])
    (tmp_path / "g.part.json").write_text('{"url": "http://elsewhere/g", "checksum": null, "validator": null}')
    server.files["/g"] = PAYLOAD
    assert fetch(f"{server.url}/g", tmp_path / "g", sha(PAYLOAD), progress=False).read_bytes() == PAYLOAD
    assert server.requests[-1] == ("/g", None)


def test_an_html_page_is_never_installed_as_data(server, tmp_path, monkeypatch, capsys):
    """Issue 19: a login page served with 200 was installed as a probing task."""
    senteval_mirror(server)
    monkeypatch.setattr(senteval, "SHA256", {})
    server.files["/m/past_present.txt"] = b"\n<!DOCTYPE html>\n<html><body>Please sign in</body></html>\n"
    command = ["senteval", "--data", str(tmp_path), "--mirror", f"{server.url}/m", "--tasks", "probing"]
    assert data_main(command) == 2
    err = capsys.readouterr().err
    assert "past_present.txt: the server sent an HTML page (an error or login page?) instead of the file" in err
    assert not (tmp_path / "senteval/probing/past_present.txt").exists()


def test_a_trickling_server_cannot_hold_a_download_forever(server, tmp_path, monkeypatch):
    """Issue 19: one byte every few seconds never hit the socket timeout; now a minimum rate applies."""
    server.files["/slow"] = PAYLOAD
    server.trickle = 0.1
    monkeypatch.setenv("BRIDGEEMBED_DOWNLOAD_TIMEOUT", "0.5")
    monkeypatch.setenv("BRIDGEEMBED_DOWNLOAD_MIN_RATE", "1000")
    began = time.monotonic()
    with pytest.raises(DataError, match=r"interrupted after \d+ bytes \(\d+ bytes in \d+ s, below the minimum of "
                                        r"1000 bytes/s"):
        fetch(f"{server.url}/slow", tmp_path / "slow", progress=False)
    assert time.monotonic() - began < 5
    assert (tmp_path / "slow.part").exists()  # kept: a later run resumes it
    monkeypatch.setenv("BRIDGEEMBED_DOWNLOAD_TIMEOUT", "soon")
    with pytest.raises(DataError, match="BRIDGEEMBED_DOWNLOAD_TIMEOUT='soon': expected a positive number"):
        fetch(f"{server.url}/slow", tmp_path / "slow", progress=False)
